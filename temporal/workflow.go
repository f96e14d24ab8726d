package temporal

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/sandgate/sandgate/blueprint"
	"github.com/sandgate/sandgate/runtime"
)

// Workflows holds what the run workflow needs besides its input: the node
// type registry blueprints are parsed with (the embedder's, the same on
// every worker).
type Workflows struct {
	Registry *runtime.Registry
}

// run is one workflow execution's state; only workflow code touches it.
type run struct {
	in      RunInput
	id      string
	bp      *blueprint.Blueprint
	sched   *runtime.Scheduler
	events  []runtime.Event // every event, numbered; the host journals them
	acked   int             // the host has journaled events up to here
	host    openResult
	running map[string]*attempt
	results workflow.Channel
	status  Status
	answers int
	// deadline is the budget.timeout timer of the current stretch, which
	// ends at deadlineAt.
	deadline       workflow.Future
	cancelDeadline workflow.CancelFunc
	deadlineAt     time.Time
	// mayContinue is set for runs started since continue-as-new came in;
	// launches are the attempts the latest input started, held back while
	// the run drains for its continuation; signals are carried ones.
	mayContinue bool
	launches    []runtime.Event
	signals     []CarriedSignal
	// change is the last change the host recorded after an attempt;
	// noChange says why the latest could not be (movewf.go).
	change   *Change
	noChange string
	// checkCopies is set for runs started since the check of reopened
	// and retried workspaces came in (diverge.go).
	checkCopies bool
	// quickRetry is set for runs started since a node activity's second
	// try follows its first at once (versionQuickRetry).
	quickRetry bool
}

type attempt struct {
	n      int
	cancel workflow.CancelFunc
}

// result is what an attempt's coroutine reports back.
type result struct {
	attempt int
	node    string
	res     nodeResult
	err     error
	// queue is the host queue the attempt ran on.
	queue string
}

// Run is the workflow: one blueprint run.
func (w *Workflows) Run(ctx workflow.Context, in RunInput) (Status, error) {
	r, err := w.newRun(ctx, in)
	if err != nil {
		return Status{}, err
	}
	if err := r.query(ctx); err != nil {
		return Status{}, err
	}
	r.mayContinue = workflow.GetVersion(ctx, versionContinue, workflow.DefaultVersion, 1) >= 1
	r.checkCopies = workflow.GetVersion(ctx, versionDiverged, workflow.DefaultVersion, 1) >= 1
	r.quickRetry = workflow.GetVersion(ctx, versionQuickRetry, workflow.DefaultVersion, 1) >= 1
	if in.Carried != nil {
		r.resume(ctx, in.Carried)
	} else {
		if err := r.open(ctx, false); err != nil || r.status.Status != runtime.StatusRunning {
			return r.status, err
		}
		inputs, _ := runtime.CheckInputs(r.bp, in.Inputs) // checked by the client
		r.input(ctx, runtime.Event{Type: runtime.EvRunStarted, RunID: r.id, Blueprint: r.bp.Name, Inputs: inputs}, r.host.Info)
	}
	for {
		if err := r.loop(ctx); err != nil {
			return r.status, err // continued as new
		}
		r.finish(ctx)
		if !r.waitAnswer(ctx) {
			break
		}
	}
	r.publish(ctx)
	return r.status, nil
}

func (w *Workflows) newRun(ctx workflow.Context, in RunInput) (*run, error) {
	if in.HandoffWait <= 0 {
		in.HandoffWait = DefaultHandoffWait
	}
	if in.HostTimeout <= 0 {
		in.HostTimeout = time.Minute
	}
	if in.HeartbeatTimeout <= 0 {
		in.HeartbeatTimeout = 20 * time.Second
	}
	if in.ContinueAfter <= 0 {
		in.ContinueAfter = DefaultContinueAfter
	}
	bp, err := w.Registry.Parse(in.File, in.Source)
	if err != nil {
		return nil, temporal.NewNonRetryableApplicationError(fmt.Sprintf("blueprint %s: %v", in.File, err), "BlueprintInvalid", nil)
	}
	if err := runtime.CheckLabels(in.Labels); err != nil {
		return nil, temporal.NewNonRetryableApplicationError(err.Error(), "LabelsInvalid", nil)
	}
	id := workflow.GetInfo(ctx).WorkflowExecution.ID
	r := &run{in: in, id: id, bp: bp, sched: runtime.NewScheduler(bp), running: map[string]*attempt{},
		results: workflow.NewBufferedChannel(ctx, 1024)}
	r.status = Status{RunID: id, Blueprint: bp.Name, Labels: in.Labels, Status: runtime.StatusRunning}
	return r, nil
}

func (r *run) query(ctx workflow.Context) error {
	if err := workflow.SetQueryHandler(ctx, QueryStatus, func() (Status, error) { return r.snapshot(), nil }); err != nil {
		return err
	}
	return workflow.SetQueryHandler(ctx, QueryEvents, func(after int) ([]runtime.Event, error) {
		if after < 0 || after > len(r.events) {
			after = len(r.events)
		}
		return r.events[after:], nil
	})
}

func (r *run) snapshot() Status {
	s := r.status
	s.Events = len(r.events)
	return s
}

// open prepares the workspace: on any worker for a new run, on the run's
// host for an answered one.
func (r *run) open(ctx workflow.Context, again bool) error {
	// A new run waits up to an hour for a host with room (--max-runs).
	opts := workflow.ActivityOptions{StartToCloseTimeout: 30 * time.Minute, ScheduleToCloseTimeout: time.Hour,
		HeartbeatTimeout: r.in.HeartbeatTimeout,
		RetryPolicy:      &temporal.RetryPolicy{MaximumInterval: 30 * time.Second, NonRetryableErrorTypes: []string{"BlueprintInvalid", "PrepareFailed"}}}
	if again {
		opts.TaskQueue, opts.ScheduleToStartTimeout = r.host.Queue, r.in.HostTimeout
		opts.RetryPolicy.MaximumAttempts = 2
	}
	var res openResult
	err := workflow.ExecuteActivity(workflow.WithActivityOptions(ctx, opts), ActivityOpen, openInput{RunID: r.id, Run: r.in}).Get(ctx, &res)
	if err != nil {
		if again && hostLost(err) {
			return fmt.Errorf("worker host %s lost; the workspace was on it: %w", r.host.Host, err)
		}
		r.status.Status, r.status.Kind = runtime.StatusFailed, "open"
		r.status.Reason = fmt.Sprintf("prepare the run's environment: %v", err)
		return nil
	}
	r.host = res
	r.status.Host, r.status.Dir = res.Host, res.Dir
	return nil
}

// emit numbers an event, stamps it with workflow time and keeps it for the
// host's journal.
func (r *run) emit(ctx workflow.Context, ev runtime.Event) runtime.Event {
	ev.Seq = len(r.events) + 1
	if ev.Time.IsZero() {
		ev.Time = workflow.Now(ctx).UTC()
	}
	r.events = append(r.events, ev)
	return ev
}

// input records an input event (then info events), applies it and acts on
// the scheduler's commands, exactly as the local runtime does.
func (r *run) input(ctx workflow.Context, ev runtime.Event, info []runtime.Event) {
	rec := r.emit(ctx, ev)
	for _, i := range info {
		i.Time = time.Time{}
		r.emit(ctx, i)
	}
	if rec.Type == runtime.EvRunStarted || rec.Type == runtime.EvAnswered {
		r.startDeadline(ctx)
	}
	cmds, err := r.sched.Apply(rec)
	if err != nil {
		// Only answers are refused, and they are checked before.
		r.status.Note = err.Error()
		return
	}
	for _, c := range cmds {
		r.act(ctx, r.emit(ctx, c))
	}
	if rec.Type == runtime.EvNodeFinished {
		r.status.Verdict = verdict(rec)
	}
	st, reason := r.sched.Status()
	r.status.Status, r.status.Reason = st, reason
	r.launchHeld(ctx)
}

func (r *run) act(ctx workflow.Context, c runtime.Event) {
	switch c.Type {
	case runtime.EvNodeStarted:
		r.status.NodeRuns++
		r.launches = append(r.launches, c)
	case runtime.EvNodeCanceled:
		if a := r.running[c.Node]; a != nil && a.n == c.Attempt {
			a.cancel()
			delete(r.running, c.Node)
		}
		r.launches = slices.DeleteFunc(r.launches, func(l runtime.Event) bool { return l.Node == c.Node && l.Attempt == c.Attempt })
	case runtime.EvRunFinished:
		r.status.Kind = c.Kind
	}
}

// launch runs one attempt in a coroutine: the retry backoff as a timer,
// then the node activity on the run's host.
func (r *run) launch(ctx workflow.Context, c runtime.Event) {
	actx, cancel := workflow.WithCancel(ctx)
	r.running[c.Node] = &attempt{n: c.Attempt, cancel: cancel}
	workflow.Go(actx, func(gctx workflow.Context) {
		if c.DelayMS > 0 {
			if err := workflow.Sleep(gctx, time.Duration(c.DelayMS)*time.Millisecond); err != nil {
				return
			}
		}
		in := nodeInput{RunID: r.id, Repo: r.in.Repo, Rev: r.in.Rev, Events: r.unacked(), Node: c.Node, Attempt: c.Attempt, Feedback: c.Feedback}
		if r.change != nil {
			in.Have = r.change.Fingerprint
		}
		in.Check = r.checkCopies && r.noChange == ""
		queue := r.host.Queue
		var res nodeResult
		err := workflow.ExecuteActivity(workflow.WithActivityOptions(gctx, r.nodeOptions(c.Node)), ActivityNode, in).Get(gctx, &res)
		if gctx.Err() != nil {
			return // canceled: the scheduler no longer waits for it
		}
		r.results.Send(gctx, result{attempt: c.Attempt, node: c.Node, res: res, err: err, queue: queue})
	})
}

func (r *run) nodeOptions(node string) workflow.ActivityOptions {
	limit := 24 * time.Hour
	if t := r.bp.Nodes[node].Timeout; t > 0 {
		limit = t + 5*time.Minute
	}
	opts := workflow.ActivityOptions{TaskQueue: r.host.Queue, ScheduleToStartTimeout: r.in.HostTimeout,
		StartToCloseTimeout: limit, HeartbeatTimeout: r.in.HeartbeatTimeout,
		// A node's failure is its result; only the harness breaking is
		// an error, and a second try is enough to ride out a hiccup.
		RetryPolicy: &temporal.RetryPolicy{MaximumAttempts: 2, NonRetryableErrorTypes: []string{"RunClosed"}}}
	if r.quickRetry {
		opts.RetryPolicy.InitialInterval = quickRetryInterval
	}
	return opts
}

// versionQuickRetry names the change that sends a node activity's second
// try quickRetryInterval after its first failed instead of the default
// second: after a heartbeat timeout that try waits on the host's queue
// for the host timeout anyway (a worker restarted on the host takes it),
// and each moment before it is added to the run's time when the host is
// gone for good. Runs started before it keep the second.
const versionQuickRetry = "node-retry-quick"

// quickRetryInterval leaves a worker that failed a node try (not a
// timeout) a moment before the same host tries again.
const quickRetryInterval = 200 * time.Millisecond

func (r *run) unacked() []runtime.Event {
	return append([]runtime.Event(nil), r.events[r.acked:]...)
}

func (r *run) ack(n int) {
	if n > r.acked && n <= len(r.events) {
		r.acked = n
	}
}

// hostLost reports whether an activity failed because the host queue had
// no worker (schedule-to-start) or its worker went silent (heartbeat).
func hostLost(err error) bool {
	var te *temporal.TimeoutError
	if !errors.As(err, &te) {
		return false
	}
	t := te.TimeoutType()
	return t == enums.TIMEOUT_TYPE_SCHEDULE_TO_START || t == enums.TIMEOUT_TYPE_HEARTBEAT
}

func verdict(ev runtime.Event) string {
	s := fmt.Sprintf("%s#%d ", ev.Node, ev.Attempt)
	switch {
	case ev.Error != "":
		return s + "broke: " + ev.Error
	case ev.Reason != "":
		return s + string(ev.Outcome) + ": " + ev.Reason
	}
	return s + string(ev.Outcome)
}
