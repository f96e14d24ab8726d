package temporal

import (
	"fmt"
	"maps"
	"slices"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/sandgate/sandgate/runtime"
)

// loop feeds the scheduler node results, the budget timeout and the
// workflow's cancellation until the run finishes, or returns the
// continue-as-new error once its history is long and no attempt runs
// (unless the run is too large to carry: it is handed off then).
func (r *run) loop(ctx workflow.Context) error {
	for r.status.Status == runtime.StatusRunning {
		if len(r.launches) > 0 && len(r.running) == 0 {
			if err := r.continueAsNew(ctx); err != nil {
				return err
			}
			continue
		}
		sel := workflow.NewSelector(ctx)
		sel.AddReceive(r.results, func(c workflow.ReceiveChannel, _ bool) {
			var res result
			c.Receive(ctx, &res)
			r.result(ctx, res)
		})
		if r.deadline != nil {
			sel.AddFuture(r.deadline, func(f workflow.Future) {
				r.deadline, r.deadlineAt = nil, time.Time{}
				if f.Get(ctx, nil) == nil {
					r.input(ctx, runtime.Event{Type: runtime.EvBudgetExhausted, Kind: "timeout",
						Reason: fmt.Sprintf("run timeout %s", r.bp.Budget.Timeout)}, nil)
				}
			})
		}
		sel.AddReceive(ctx.Done(), func(workflow.ReceiveChannel, bool) {
			r.input(ctx, runtime.Event{Type: runtime.EvCancelRequested, Reason: "canceled: the workflow was canceled"}, nil)
		})
		sel.Select(ctx)
	}
	if r.cancelDeadline != nil {
		r.cancelDeadline()
		r.deadline, r.cancelDeadline = nil, nil
	}
	return nil
}

// result turns an attempt's outcome into the scheduler's next input.
func (r *run) result(ctx workflow.Context, res result) {
	if a := r.running[res.node]; a == nil || a.n != res.attempt {
		return // an attempt canceled meanwhile
	}
	delete(r.running, res.node)
	switch {
	case res.err == nil:
		r.ack(res.res.Journaled)
		r.recordChange(res.res)
		ev := res.res.Event
		ev.Seq, ev.Time = 0, time.Time{}
		r.input(ctx, ev, nil)
	case hostLost(res.err) || diverged(res.err):
		// A lost host, or a workspace a cut-off attempt wrote to: the
		// run is rebuilt from the record and the attempt runs again.
		why := r.move(ctx, res)
		if why == "" {
			return // the attempt runs again on the run's new host
		}
		r.input(ctx, runtime.Event{Type: runtime.EvWorkspaceLost,
			Reason: fmt.Sprintf("worker host %s lost; the workspace was on it (%v); %s", r.host.Host, res.err, why)}, nil)
	default:
		// The harness broke around the node: the node's retry policy
		// decides, as for a node that returned an error.
		r.input(ctx, runtime.Event{Type: runtime.EvNodeFinished, Node: res.node, Attempt: res.attempt,
			Error: fmt.Sprintf("activity failed: %v", res.err)}, nil)
	}
}

// startDeadline (re)starts the budget.timeout timer: from the run's start
// or from the latest answer, as the local runtime counts it.
func (r *run) startDeadline(ctx workflow.Context) {
	if r.cancelDeadline != nil {
		r.cancelDeadline()
		r.deadline, r.cancelDeadline = nil, nil
	}
	r.deadlineAt = time.Time{}
	if t := r.bp.Budget.Timeout; t > 0 {
		r.startTimer(ctx, workflow.Now(ctx).Add(t))
	}
}

// startTimer runs the budget.timeout timer until at.
func (r *run) startTimer(ctx workflow.Context, at time.Time) {
	tctx, cancel := workflow.WithCancel(ctx)
	r.deadline, r.cancelDeadline, r.deadlineAt = workflow.NewTimer(tctx, max(at.Sub(workflow.Now(ctx)), time.Millisecond)), cancel, at
}

// finish wraps the run up on its host: the rest of the journal, the
// hand-off report, run.json, the box closed. It runs even when the
// workflow was canceled, in a context the cancel does not reach.
func (r *run) finish(ctx workflow.Context) {
	dctx, _ := workflow.NewDisconnectedContext(ctx)
	// Map order is random: cancel in node order, or a replay would issue
	// the cancel commands in another order than the history has them.
	for _, id := range slices.Sorted(maps.Keys(r.running)) {
		r.running[id].cancel()
	}
	r.running, r.launches = map[string]*attempt{}, nil
	opts := workflow.ActivityOptions{TaskQueue: r.host.Queue, ScheduleToStartTimeout: r.in.HostTimeout,
		StartToCloseTimeout: 10 * time.Minute, HeartbeatTimeout: r.in.HeartbeatTimeout, RetryPolicy: &temporal.RetryPolicy{MaximumAttempts: 3}}
	var res finishResult
	in := finishInput{RunID: r.id, Repo: r.in.Repo, Rev: r.in.Rev, Events: r.unacked()}
	err := workflow.ExecuteActivity(workflow.WithActivityOptions(dctx, opts), ActivityFinish, in).Get(dctx, &res)
	switch {
	case hostLost(err):
		r.status.Note = fmt.Sprintf("worker host %s lost; the workspace was on it: its run record stops at event %d of %d", r.host.Host, r.acked, len(r.events))
	case err != nil:
		r.status.Note = fmt.Sprintf("the run's record could not be finished: %v", err)
	default:
		// The host journaled its own wrap-up (run_closed): number the
		// next events after it.
		for len(r.events) < res.Journaled {
			r.emit(ctx, runtime.Event{Type: runtime.EvRunClosed})
		}
		r.ack(res.Journaled)
	}
	r.publish(ctx)
}

// waitAnswer holds a handed-off run until a person answers (true: the run
// goes on), abandons it, or budget.handoff_wait passes. No worker is busy
// meanwhile: the workflow is only a timer and two signal channels.
func (r *run) waitAnswer(ctx workflow.Context) bool {
	if r.status.Status != runtime.StatusHandedOff || r.answers >= r.bp.Budget.Answers || ctx.Err() != nil {
		return false
	}
	r.status.Waiting = true
	defer func() { r.status.Waiting = false }()
	tctx, cancel := workflow.WithCancel(ctx)
	defer cancel()
	timer := workflow.NewTimer(tctx, r.in.HandoffWait)
	answers := workflow.GetSignalChannel(ctx, SignalAnswer)
	abandon := workflow.GetSignalChannel(ctx, SignalAbandon)
	for {
		var done, answered bool
		onAnswer := func(a Answer) {
			answered = r.answer(ctx, a)
			done = answered
		}
		onAbandon := func(why string) { r.status.Note, done = "hand-off abandoned: "+why, true }
		// Signals carried over a continue-as-new came first.
		if s, ok := r.nextSignal(); ok {
			if s.Name == SignalAnswer {
				onAnswer(s.Answer)
			} else {
				onAbandon(s.Why)
			}
			if done {
				return answered
			}
			continue
		}
		sel := workflow.NewSelector(ctx)
		sel.AddReceive(answers, func(c workflow.ReceiveChannel, _ bool) {
			var a Answer
			c.Receive(ctx, &a)
			onAnswer(a)
		})
		sel.AddReceive(abandon, func(c workflow.ReceiveChannel, _ bool) {
			var why string
			c.Receive(ctx, &why)
			onAbandon(why)
		})
		sel.AddFuture(timer, func(workflow.Future) {
			r.status.Note, done = fmt.Sprintf("no answer within %s", r.in.HandoffWait), true
		})
		sel.AddReceive(ctx.Done(), func(workflow.ReceiveChannel, bool) {
			r.status.Note, done = "canceled while waiting for an answer", true
		})
		sel.Select(ctx)
		if done {
			return answered
		}
	}
}

// answer continues the run as runtime.Answer does: the host reopens the
// workspace, the answered event goes to the scheduler, the node restarts.
func (r *run) answer(ctx workflow.Context, a Answer) bool {
	if err := r.sched.CheckAnswer(a.Node); err != nil {
		r.status.Note = "answer refused: " + err.Error()
		return false
	}
	if err := r.open(ctx, true); err != nil {
		r.status.Note = "answer not applied: " + err.Error()
		return false
	}
	r.answers++
	r.status.Answers, r.status.Note, r.status.Kind = r.answers, "", ""
	r.input(ctx, runtime.Event{Type: runtime.EvAnswered, Node: a.Node, Feedback: a.Note, By: orDefault(a.By, "unknown")}, r.host.Info)
	r.publish(ctx)
	return true
}

// publish puts the run's status where lists of workflows can see it.
func (r *run) publish(ctx workflow.Context) {
	st := string(r.status.Status)
	if r.status.Waiting || (r.status.Status == runtime.StatusHandedOff && r.answers < r.bp.Budget.Answers && r.status.Note == "") {
		st = "waiting"
	}
	if r.in.SearchAttributes {
		_ = workflow.UpsertTypedSearchAttributes(ctx, temporal.NewSearchAttributeKeyKeyword(AttrStatus).ValueSet(st))
		return
	}
	_ = workflow.UpsertMemo(ctx, map[string]any{"status": st})
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
