// Package gocanary makes a go test -json report something the code under
// test cannot rewrite without being caught, and runs it so that no code
// of the change runs while the evidence is readable in the box.
//
// The change's code runs inside the test binary that reports on it, so it
// can print the framing lines go test -json believes, or re-run itself and
// turn FAIL into PASS. Three things, compiled into every package whose
// test binary holds changed code (see [Affected]) and that the command
// can test (see Options.Command), make that detectable:
//
//   - a seal on every test function of the package: a t.Cleanup that
//     logs a secret pass token (or skip token) when the test passed (or
//     was skipped). A pass the report claims without its token was not
//     earned: the token is drawn fresh and lives only in the compiled
//     binary, never in any file of the box once the binary runs;
//   - a failing canary, named, placed and worded like the package's own
//     tests (its naming style and t.Errorf formats), which must fail;
//   - a passing canary of the same make, which must pass with its token.
//
// The sources go in through go test -overlay in a first phase in which
// no test binary runs: go test's -exec hands each to a collector script
// that stashes it. The overlay sources and held-out test files are then
// deleted, and a second phase runs the stashed binaries through go tool
// test2json. The packages the change cannot reach run last, their binaries
// kept from the first phase and run only if unchanged since, when nothing
// of the plan is left in the box: their
// tests may start a program the change rewrote, which must find no seal
// source, and their reports are not sealed, so no code of the change may
// run beside them with their report files in reach. [Plan.Decode]
// checks seals and canaries in the stream and returns it as plain go test
// would have printed it.
//
// It imports only sandbox (for the command and result types).
package gocanary
