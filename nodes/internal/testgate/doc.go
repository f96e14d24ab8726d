// Package testgate is the test gate: it runs the blueprint's test command
// and judges the change by the runner's structured report (nodes/
// testreport), never by an exit code alone, and by what the harness reads
// itself: seals and canaries (internal/gocanary) compiled into every
// package the change reaches, so that a report the test binary rewrote is
// caught, test-mode detection in the change's production code, module
// boundaries that hide packages from go test ./..., and declared tests
// that never ran. Flaky failures are told from broken ones by re-running
// them; held-out tests run through gate.HeldOut in a box of their own.
//
// It imports the workspace, gate, testreport, internal/gocanary and the
// small internal helpers; it must never import another node package or
// the nodes facade.
package testgate
