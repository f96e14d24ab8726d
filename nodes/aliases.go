package nodes

import (
	"context"

	"github.com/sandgate/sandgate/nodes/internal/gitremote"
	"github.com/sandgate/sandgate/nodes/testreport"
	"github.com/sandgate/sandgate/nodes/verdict"
)

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

type (
	// TestReport is testreport.Report.
	TestReport = testreport.Report
	// TestFailure is testreport.Failure.
	TestFailure = testreport.Failure
	// GoPackage is testreport.GoPackage.
	GoPackage = testreport.GoPackage
)

// ErrNoReport is testreport.ErrNoReport.
var ErrNoReport = testreport.ErrNoReport

// ParseGoTestJSON is testreport.ParseGoTestJSON.
func ParseGoTestJSON(out string) (*TestReport, error) { return testreport.ParseGoTestJSON(out) }

// ParseJUnit is testreport.ParseJUnit.
func ParseJUnit(data []byte) (*TestReport, error) { return testreport.ParseJUnit(data) }

// ParseTAP is testreport.ParseTAP.
func ParseTAP(out string) (*TestReport, error) { return testreport.ParseTAP(out) }

// PushedBranch is a branch git_push made on a remote (gitremote.PushedBranch).
type PushedBranch = gitremote.PushedBranch

// DeleteBranch deletes a pushed branch on its remote (see
// gitremote.DeleteBranch).
func DeleteBranch(ctx context.Context, b PushedBranch) error { return gitremote.DeleteBranch(ctx, b) }
