// Package reviewqueue is the local review queue: one directory per
// queued change (entry.json, summary.md, verify.json, diff.patch), named
// by run id, and the decisions people make on it. The review node queues
// entries, the CLI and the web inbox list, show, approve and reject them,
// and `sandgate prune` removes decided ones, all through this package, so
// an entry is written, read and decided the same way whoever does it.
// Approving carries out what the entry's on_approve recorded (landing the
// commit on a branch, or acting on its pull request); rejecting deletes
// the branches a git_push node marked delete_on_reject.
//
// It imports nodes/verdict, the runtime (to read a run's journal) and the
// internal github, gitremote, feedback and atomicfile packages, none of
// which needs the sandbox; it must never import the sandbox, the
// workspace, a node package or the nodes facade.
package reviewqueue
