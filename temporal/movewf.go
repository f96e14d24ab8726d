package temporal

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/sandgate/sandgate/runtime"
)

// recordChange keeps the change a host recorded after an attempt.
func (r *run) recordChange(res nodeResult) {
	if res.Change != nil {
		r.change = res.Change
	}
	r.noChange = res.NoChange
}

// move continues a run whose host was lost (or whose workspace is not the
// recorded one, diverge.go) on another host: it rebuilds the workspace
// there from the base commit and the recorded change, then runs the lost
// attempt again under its number. It returns why the run
// cannot move ("" once it has moved).
func (r *run) move(ctx workflow.Context, res result) string {
	v := workflow.GetVersion(ctx, versionMove, workflow.DefaultVersion, versionMoveWaits)
	if v < 1 {
		return "runs started before moving came in do not move"
	}
	if res.queue != r.host.Queue {
		// Another attempt's loss has moved the run already.
		r.relaunch(ctx, res)
		return ""
	}
	if r.noChange != "" {
		return "the change cannot be rebuilt elsewhere: " + r.noChange
	}
	from := r.host.Host
	opts := workflow.ActivityOptions{StartToCloseTimeout: 30 * time.Minute, ScheduleToCloseTimeout: time.Hour,
		HeartbeatTimeout: r.in.HeartbeatTimeout,
		RetryPolicy: &temporal.RetryPolicy{MaximumInterval: 10 * time.Second,
			NonRetryableErrorTypes: []string{"BlueprintInvalid", "PrepareFailed", "RecordTampered", "RebuildFailed"}}}
	in := openInput{RunID: r.id, Run: r.in, Move: &moveInput{From: from, Events: r.unackedFrom(0), Change: r.change}}
	var opened openResult
	var err error
	if v < versionMoveWaits {
		err = workflow.ExecuteActivity(workflow.WithActivityOptions(ctx, opts), ActivityOpen, in).Get(ctx, &opened)
	} else if ended := r.awaitMove(ctx, opts, in, &opened, &err); ended != nil {
		r.input(ctx, *ended, nil)
		return ""
	}
	if err != nil {
		return fmt.Sprintf("the change cannot be rebuilt on another host: %v", err)
	}
	r.host = opened
	r.status.Host, r.status.Dir = opened.Host, opened.Dir
	r.acked = len(in.Move.Events)
	cause := fmt.Sprintf("host %s lost", from)
	if diverged(res.err) {
		cause = fmt.Sprintf("the workspace on host %s is not the recorded one", from)
	}
	r.emit(ctx, runtime.Event{Type: runtime.EvRunResumed, Node: res.node, Attempt: res.attempt,
		Reason: fmt.Sprintf("%s: rebuilt on host %s from the base and the recorded change; %s#%d runs again", cause, opened.Host, res.node, res.attempt)})
	for _, i := range opened.Info {
		i.Time = time.Time{}
		r.emit(ctx, i)
	}
	r.publish(ctx)
	r.relaunch(ctx, res)
	return ""
}

// versionMoveWaits is the version of versionMove from which a move waiting
// for a host (up to an hour) gives way to the run's budget.timeout and to
// a cancel; before it, the run waited for the move first.
const versionMoveWaits = 2

// awaitMove waits for the move's open activity, or for the run's
// budget.timeout or the workflow's cancel, whichever comes first. When one
// of those does, the move is canceled and the scheduler input that ended
// the wait is returned (the run ends there, as it would between nodes).
func (r *run) awaitMove(ctx workflow.Context, opts workflow.ActivityOptions, in openInput, opened *openResult, err *error) *runtime.Event {
	actx, cancel := workflow.WithCancel(ctx)
	defer cancel()
	var ended *runtime.Event
	done := false
	sel := workflow.NewSelector(ctx)
	sel.AddFuture(workflow.ExecuteActivity(workflow.WithActivityOptions(actx, opts), ActivityOpen, in), func(f workflow.Future) {
		*err, done = f.Get(ctx, opened), true
	})
	if r.deadline != nil {
		sel.AddFuture(r.deadline, func(f workflow.Future) {
			r.deadline, r.deadlineAt = nil, time.Time{}
			if f.Get(ctx, nil) == nil {
				ended = &runtime.Event{Type: runtime.EvBudgetExhausted, Kind: "timeout",
					Reason: fmt.Sprintf("run timeout %s (while the run waited to move to another host)", r.bp.Budget.Timeout)}
			}
		})
	}
	canceled := func(workflow.ReceiveChannel, bool) {
		ended = &runtime.Event{Type: runtime.EvCancelRequested, Reason: "canceled: the workflow was canceled (while the run waited to move to another host)"}
	}
	sel.AddReceive(ctx.Done(), canceled)
	for !done && ended == nil {
		sel.Select(ctx)
	}
	if ended == nil && ctx.Err() != nil {
		// The cancel reached the move's activity before the selector.
		canceled(nil, false)
	}
	return ended
}

// relaunch runs a lost attempt again on the run's host, under its number
// and with its feedback, as a resumed local run re-runs a cut-off node.
func (r *run) relaunch(ctx workflow.Context, res result) {
	for i := len(r.events) - 1; i >= 0; i-- {
		ev := r.events[i]
		if ev.Type == runtime.EvNodeStarted && ev.Node == res.node && ev.Attempt == res.attempt {
			ev.DelayMS = 0
			r.launch(ctx, ev)
			return
		}
	}
}

// unackedFrom copies the events after n.
func (r *run) unackedFrom(n int) []runtime.Event {
	return append([]runtime.Event(nil), r.events[n:]...)
}
