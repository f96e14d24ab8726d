// Package gitremote is the harness's side of a git remote: pushing a
// commit from the promotion repository, deleting a pushed branch, and
// running git in a scratch repository against a remote, always with a
// minimal environment (no one's git configuration, hooks or credential
// helpers) and a push token answered only to the remote's own host.
// A push never forces; a deletion leases the pushed commit.
//
// It imports blueprint (for the endpoint rule) and
// nodes/internal/gitstore; it must never import a node package, the
// workspace or the runtime.
package gitremote
