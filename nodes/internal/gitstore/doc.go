// Package gitstore builds commits outside the box: the run's promotion
// repository (a bare repository that borrows the snapshot's objects, so
// neither the user's repository nor the shared snapshot is written), its
// objects read at a cost that follows the change and not the history,
// trees rewritten only along the changed paths, the change split by the
// repository's own .gitignore files as git add -A would, its size
// measured against the base blobs, and the paths and .gitmodules git
// itself would refuse to promote.
//
// It imports only the sandbox (for the change) and the leaf
// nodes/internal/wspath, atomicfile and feedback; it knows nothing of nodes, runs or verdicts,
// and must never import the runtime, the workspace or a node package.
package gitstore
