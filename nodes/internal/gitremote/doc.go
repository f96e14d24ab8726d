// Package gitremote is the harness's side of a git remote: pushing a
// commit from the promotion repository, deleting a pushed branch, and
// running git in a scratch repository against a remote, always with a
// minimal environment (no one's git configuration, hooks or credential
// helpers) and a push token answered only to the remote's own host.
// A push never forces; a deletion leases the pushed commit.
//
// It also knows git's names: which branch names git accepts, and a
// commit's short form. It imports blueprint (for the endpoint rule) and
// nodes/internal/feedback; it must never import the sandbox, the
// workspace, the runtime or a node package, so that the review queue can
// use it without them. A push record names the GitHub App that minted
// its token through the leaf internal/ghapp, not the credential package
// (which imports the runtime).
package gitremote
