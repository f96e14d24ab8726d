// Package workspace is a run's sandboxed copy of the repository, shared
// by the built-in nodes and by node types an embedder registers: the box
// its commands run in (and the egress proxy and audit logs around it),
// the change the run made against the base commit and its fingerprint,
// the lock that keeps writers out while a gate judges or a promotion
// commits, and the change as a diff or a patch.
//
// The user's repository is only read: the box works on a copy-on-write
// snapshot, and commits are built outside the box in the run's own
// promotion repository (nodes/internal/gitstore).
//
// It imports blueprint, runtime, sandbox, secrets and the internal
// gitstore and feedback packages; it must never import a node package or
// the nodes facade.
package workspace
