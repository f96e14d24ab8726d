package nodes

import "github.com/sandgate/sandgate/nodes/verdict"

// Names the package held before its parts moved into packages of their
// own; they stay so that existing callers keep compiling. New code
// imports the packages that own them.
type (
	// Verdict is verdict.Verdict.
	Verdict = verdict.Verdict
	// GateResult is verdict.GateResult.
	GateResult = verdict.GateResult
	// TestCounts is verdict.TestCounts.
	TestCounts = verdict.TestCounts
	// GateRow is verdict.GateRow.
	GateRow = verdict.GateRow
)
