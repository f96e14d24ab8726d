// Package nodetest holds what the tests of the node packages share: a
// seeded repository with a bug, a runtime with the built-in types and a
// sandboxed environment (Harness), readers of a run's records, a smart
// HTTP git server, a GitHub pull-request double and review queue entries.
// The attack helpers (GateRun, MustFail, AssertNothingPromoted) fail a
// test whose setup step failed or whose run ended by a crash rather than a
// verdict: either would let an attack test pass without judging the attack.
// Only tests import it; it imports the nodes facade, so no node package's
// own (internal) test files may.
package nodetest
