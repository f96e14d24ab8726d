// Package testreport reads what a test runner said about a run: go test
// -json streams, JUnit XML and TAP, counted in full however long the
// output, with a test that started but never reported, a plan the output
// fell short of or a package that ran no test counted against the run,
// never for it.
//
// It is pure (text in, counts out, nothing run) and imports only
// nodes/internal/feedback; it must never import the runtime, the
// workspace or a node package.
package testreport
