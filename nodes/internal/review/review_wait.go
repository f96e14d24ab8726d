package review

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/sandgate/sandgate/internal/pause"
	"github.com/sandgate/sandgate/nodes/internal/feedback"
	"github.com/sandgate/sandgate/nodes/reviewqueue"
	"github.com/sandgate/sandgate/runtime"
)

// Decisions a waiting review node reports (outputs.<node>.decision).
const (
	DecisionApproved         = "approved"
	DecisionChangesRequested = "changes_requested"
	DecisionTimedOut         = "timed_out"
)

// reviewPolling paces a waiting review node: the local queue's entry is
// read every local (a stat-sized read, no busy loop); GitHub is asked
// first after ghMin, then less and less often up to ghMax, and never
// before a rate limit's reset. sleep is replaced by tests that must not
// wait for real.
var reviewPolling = struct {
	local, ghMin, ghMax time.Duration
	sleep               func(ctx context.Context, d time.Duration) error
}{local: time.Second, ghMin: 10 * time.Second, ghMax: 2 * time.Minute, sleep: pause.For}

// Feedback bounds: what the agent is handed from the reviewers.
const (
	maxReviewComments      = 40
	maxReviewFeedbackBytes = 8 << 10
)

// awaitLocal waits until someone decides the local queue entry (sandgate
// review approve / reject, or the inbox) or the wait runs out. The entry
// says the run waits (Waiting) while it does, so that a rejection keeps
// the branch the run continues on.
func (r *Review) awaitLocal(ctx context.Context, h *handed) (*runtime.Result, error) {
	q := &reviewqueue.Queue{Dir: filepath.Dir(h.entryDir)}
	id := filepath.Base(h.entryDir)
	defer func() {
		// Whatever ends the wait, no run waits any more; a resume sets
		// it again.
		_ = reviewqueue.SetWaiting(h.entryDir, false)
	}()
	for {
		e, err := q.Lookup(id)
		if err != nil {
			return nil, fmt.Errorf("waiting for the review decision: %w", err)
		}
		if e.Commit == h.commit {
			switch e.Status {
			case reviewqueue.StatusApproved:
				return decided(h, DecisionApproved, 0, fmt.Sprintf("approved by %s", who(e.DecidedBy)), ""), nil
			case reviewqueue.StatusRejected:
				fb := fmt.Sprintf("Changes requested by %s in the review queue (entry %s):\n%s", who(e.DecidedBy), id, h.clean(e.Note))
				n := 0
				if e.Note != "" {
					n = 1
				} else {
					fb += "(no note)"
				}
				return decided(h, DecisionChangesRequested, n, "changes requested by "+who(e.DecidedBy), bound(fb)), nil
			}
		}
		left := time.Until(h.until)
		if left <= 0 {
			return waitExpired(h, r.wait), nil
		}
		if err := reviewPolling.sleep(ctx, min(left, reviewPolling.local)); err != nil {
			return nil, err
		}
	}
}

// who is s, or "someone" when the decision did not say who.
func who(s string) string {
	if s == "" {
		return "someone"
	}
	return s
}

// decided is the node's result for a reviewers' decision.
func decided(h *handed, decision string, comments int, reason, fb string) *runtime.Result {
	h.outputs["decision"], h.outputs["comments"] = decision, comments
	// Reviewers' names and notes are text from outside: printable only.
	res := &runtime.Result{Outcome: runtime.OutcomePass, Outputs: h.outputs, Reason: feedback.PlainText(reason)}
	if decision != DecisionApproved {
		res.Outcome, res.Feedback = runtime.OutcomeFail, feedback.PlainText(fb)
	}
	return res
}

func waitExpired(h *handed, wait time.Duration) *runtime.Result {
	why := fmt.Sprintf("no review decision within %s (waiting since %s)", wait, h.since.Format(time.RFC3339))
	return decided(h, DecisionTimedOut, 0, why, why)
}

// bound cuts feedback to maxReviewFeedbackBytes, saying so.
func bound(s string) string {
	if len(s) <= maxReviewFeedbackBytes {
		return s
	}
	cut := strings.ToValidUTF8(s[:maxReviewFeedbackBytes], "")
	return cut + fmt.Sprintf("\n[%d more bytes of review feedback left out]", len(s)-len(cut))
}
