// Package ci is the ci node: it waits for continuous integration to judge
// exactly the commit the run pushed (or, with commit: base, the one it
// started from), either GitHub's check runs and statuses, polled with
// backoff and rate limits within the node's budget, or a command run in a
// fresh box built from that commit alone; and it turns the answer into
// feedback the agent can act on: the failing checks by name, each with a
// bounded, printable tail of its log.
//
// It imports the workspace, promote (the run's commit and push records),
// testgate (to read go test -json output as the test gate does, sealed
// and canaried alike, through internal/gocanary), gate and the internal
// github package; it must never import review, reviewqueue
// or the nodes facade.
package ci
