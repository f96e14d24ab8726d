// Package runtimetest is a conformance suite for node types, in the spirit
// of testing/slogtest: a node type that passes it plugs into the runtime
// without surprises. Run it from a test of the package that defines the
// type, under the race detector:
//
//	func TestMyNodeConforms(t *testing.T) {
//		runtimetest.Run(t, runtimetest.Case{Type: mynode.Type(), Body: "url: http://127.0.0.1:1"})
//	}
//
//	go test -race ./mynode
//
// # The contract
//
// Run checks these rules; each failure names the rule it broke.
//
//   - Declaration: the type has a name and a Doc, is not terminal, gives
//     every field a kind, and does not declare "outcome" (the runtime sets
//     it). Its Body validates against the declaration.
//   - Errors: Run returns an error only when the node itself broke (a
//     crash, an unreachable service). A gate that finds a problem returns
//     OutcomeFail. A case configured so that the node cannot work (a
//     service that is down on purpose) says so in Case.AllowError.
//   - Results: a nil error comes with a non-nil Result whose Outcome is
//     pass, fail or handoff.
//   - Outputs: a result publishes every output its type declares, no
//     other, each holding the Go type the declared kind becomes in
//     expressions: string; int (any integer type); float (any integer or
//     float type); bool; duration (time.Duration); string_list (a slice of
//     strings); string_map (a map from strings to strings); any (any
//     value). Every value must encode as JSON, since the journal stores
//     outputs that way. A case whose results may leave declared outputs out
//     (a refusal has nothing to publish) says so in Case.AllowMissing.
//   - Concurrency: one node instance, built once per run by the type's
//     factory, may serve several attempts at once, so Run must be safe for
//     concurrent use. The suite runs Case.Parallel attempts of one instance
//     at the same time; only the race detector (go test -race) sees a data
//     race, so run the suite with it.
//   - Cancellation: Run returns promptly once its context is canceled,
//     whether it was canceled before Run started or while it ran. The
//     bound is Case.CancelWithin (5s by default): a conformance bound for
//     "does it notice at all", not a benchmark.
//   - In a run: the type, registered in a fresh registry, runs inside a
//     real blueprint (node → succeed on pass, fail on fail) to an end.
//
// Run takes a testing.TB, so the suite itself is testable: its own tests
// run it against deliberately broken nodes with a recording TB. With a
// *testing.T each group of rules is a subtest; with any other TB the
// groups run in sequence and a fatal failure ends the suite.
//
// # Attack tests
//
// EndedByVerdict is for tests that a run is stopped: a run that "did not
// succeed" because a node broke, timed out or the harness ran out of
// budget stopped nothing, and such a test passing on it is blind.
// EndedByVerdict tells a run that ended by its nodes' verdicts from one
// that ended by a crash.
package runtimetest
