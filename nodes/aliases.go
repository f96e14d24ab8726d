package nodes

import (
	"context"

	"github.com/sandgate/sandgate/nodes/internal/review"
	"github.com/sandgate/sandgate/nodes/reviewqueue"

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

type (
	// ReviewQueue is reviewqueue.Queue.
	ReviewQueue = reviewqueue.Queue
	// ReviewEntry is reviewqueue.Entry.
	ReviewEntry = reviewqueue.Entry
	// ReviewAttempt is reviewqueue.Attempt.
	ReviewAttempt = reviewqueue.Attempt
	// ReviewDetail is reviewqueue.Detail.
	ReviewDetail = reviewqueue.Detail
	// ApproveAction is reviewqueue.ApproveAction.
	ApproveAction = reviewqueue.ApproveAction
	// PullRequest is reviewqueue.PullRequest.
	PullRequest = reviewqueue.PullRequest
	// ChangedFile is reviewqueue.ChangedFile.
	ChangedFile = reviewqueue.ChangedFile
	// PushedBranch is a branch git_push made on a remote
	// (reviewqueue.PushedBranch).
	PushedBranch = reviewqueue.PushedBranch
)

// Review queue entry states (reviewqueue.StatusPending and so on).
const (
	StatusPending  = reviewqueue.StatusPending
	StatusApproved = reviewqueue.StatusApproved
	StatusRejected = reviewqueue.StatusRejected
)

// The review queue's errors (reviewqueue.ErrBadID and so on).
var (
	ErrBadReviewID   = reviewqueue.ErrBadID
	ErrNoReview      = reviewqueue.ErrNoEntry
	ErrReviewDecided = reviewqueue.ErrDecided
)

// Decisions a waiting review node reports (outputs.<node>.decision).
const (
	DecisionApproved         = review.DecisionApproved
	DecisionChangesRequested = review.DecisionChangesRequested
	DecisionTimedOut         = review.DecisionTimedOut
)

// DeleteBranch deletes a pushed branch on its remote, sending the token
// b.TokenEnv names only to a remote under the trusted prefix or in
// allowEndpoints (the CLI's --allow-endpoint), as the review queue does.
func DeleteBranch(ctx context.Context, b PushedBranch, allowEndpoints []string) error {
	return gitremote.DeleteBranch(ctx, b, allowEndpoints)
}
