package runtime

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"sync"
	"time"

	"github.com/sandgate/sandgate/blueprint"
	"github.com/sandgate/sandgate/secrets"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
)

// execution is one run in progress: the scheduler, the journal and the
// node attempts currently running. Only the loop goroutine touches it.
type execution struct {
	rt      *Runtime
	bp      *blueprint.Blueprint
	sched   *Scheduler
	journal *Journal
	nodes   map[string]Node
	dir     string
	meta    meta
	runCtx  context.Context
	stop    context.CancelFunc
	running map[string]*attempt
	done    chan Event
	wg      sync.WaitGroup
	started time.Time
	final   *Event
	// inputs are a new run's inputs, defaults filled in, before its first
	// event gives them to the scheduler (the Prepare hook sees them).
	inputs map[string]any

	tracer   trace.Tracer
	traceCtx context.Context
	runSpan  trace.Span
	spans    map[string]trace.Span
	shutdown func(context.Context) error
	// metrics sees every event (Runtime.Metrics); flushMetrics exports
	// when the run ends.
	metrics      Observer
	flushMetrics func(context.Context) error

	env      *Environment
	services Services
	// pendingInfo holds information events produced before the journal's
	// first entry may be written.
	pendingInfo []Event
	// redact removes the harness's credentials from all the run writes.
	redact *secrets.Redactor
	// lock is the run directory's lock (lockRun), held until the run ends.
	lock *os.File
	// meter counts the run's spending live for its attempts (see Spend).
	meter *meter
}

type attempt struct {
	n      int
	cancel context.CancelFunc
}

// newExecution takes over lock (lockRun): the execution releases it when
// the run ends, and newExecution when it fails.
func (rt *Runtime) newExecution(bp *blueprint.Blueprint, nodes map[string]Node, dir string, m meta, lastSeq int, lock *os.File) (*execution, error) {
	redact := rt.redactor(bp)
	// Before the journal, so no reader sees a journal without its process
	// (Alive).
	_ = writePID(dir)
	j, err := openJournal(filepath.Join(dir, "events.jsonl"), lastSeq, !rt.NoSync, redact)
	if err != nil {
		lock.Close()
		return nil, err
	}
	tracer, shutdown, err := rt.tracer(dir, redact)
	if err != nil {
		j.Close()
		lock.Close()
		return nil, fmt.Errorf("set up tracing: %w", err)
	}
	ctx, stop := context.WithCancel(context.Background())
	x := &execution{rt: rt, bp: bp, sched: NewScheduler(bp), journal: j, nodes: nodes, dir: dir, meta: m,
		runCtx: ctx, stop: stop, running: map[string]*attempt{}, done: make(chan Event, 16),
		tracer: tracer, spans: map[string]trace.Span{}, shutdown: shutdown, redact: redact, lock: lock}
	if rt.Metrics != nil {
		x.metrics, x.flushMetrics = rt.Metrics(bp)
	}
	x.traceCtx, x.runSpan = tracer.Start(context.Background(), "run "+bp.Name,
		trace.WithAttributes(AttrRunID.String(m.RunID), AttrBlueprint.String(bp.Name)))
	return x, nil
}

// input journals an input event, applies it and carries out the commands.
func (x *execution) input(ev Event) error {
	if ev.Time.IsZero() {
		ev.Time = time.Now()
	}
	rec, err := x.record(ev)
	if err != nil {
		return err
	}
	if ev.Type == EvRunStarted || ev.Type == EvAnswered {
		x.started = rec.Time // the timeout counts from here
	}
	if err := x.flushInfo(); err != nil {
		return err
	}
	cmds, err := x.sched.Apply(rec)
	if err != nil {
		return err
	}
	err = x.dispatch(cmds)
	if ev.Type == EvNodeFinished {
		x.endNodeSpan(ev.Node)
	}
	return err
}

// flushInfo journals the information events held back until the journal's
// first entry of this process was written.
func (x *execution) flushInfo() error {
	for _, info := range x.pendingInfo {
		if _, err := x.record(info); err != nil {
			return err
		}
	}
	x.pendingInfo = nil
	return nil
}

// record appends an event and tells the observer.
func (x *execution) record(ev Event) (Event, error) {
	rec, err := x.journal.Append(ev)
	if err != nil {
		return rec, err
	}
	x.traceEvent(rec)
	if x.metrics != nil {
		x.metrics.Event(rec)
	}
	if x.rt.Observer != nil {
		x.rt.Observer.Event(rec)
	}
	return rec, nil
}

// dispatch journals commands, makes them durable, then acts on them, so a
// crash never leaves an action without its record.
func (x *execution) dispatch(cmds []Event) error {
	recs := make([]Event, 0, len(cmds))
	for _, c := range cmds {
		rec, err := x.record(c)
		if err != nil {
			return err
		}
		recs = append(recs, rec)
	}
	if err := x.journal.Sync(); err != nil {
		return err
	}
	for _, c := range recs {
		x.act(c)
	}
	return nil
}

func (x *execution) act(c Event) {
	switch c.Type {
	case EvNodeStarted:
		x.launch(c.Node, c.Attempt, c.Feedback, time.Duration(c.DelayMS)*time.Millisecond)
	case EvNodeCanceled:
		if a := x.running[c.Node]; a != nil && a.n == c.Attempt {
			a.cancel()
			delete(x.running, c.Node)
		}
	case EvRunFinished:
		fin := c
		x.final = &fin
	}
}

// launch runs one node attempt in its own goroutine.
func (x *execution) launch(id string, n int, feedback string, delay time.Duration) {
	spec := x.bp.Nodes[id]
	ctx, cancel := context.WithCancel(x.runCtx)
	x.running[id] = &attempt{n: n, cancel: cancel}
	ctx = trace.ContextWithSpan(ctx, trace.SpanFromContext(x.startNodeSpan(x.traceCtx, id, spec.Type, n)))
	ctx = x.withNotes(ctx, id, n)
	dir := filepath.Join(x.dir, "nodes", id, strconv.Itoa(n))
	// Copying the state costs O(nodes); only nodes with templates need it.
	scope := &blueprint.Scope{Inputs: x.sched.inputs, Feedback: feedback}
	if len(spec.Templates) > 0 {
		scope = x.sched.Snapshot(time.Now(), feedback)
	} else {
		scope.Run = x.sched.runInfo(time.Now())
	}
	if x.meter == nil {
		// Made at the first launch, after a resume's replay: the journaled
		// cost (since the latest answer) is where the live count starts.
		x.meter = &meter{total: x.sched.cost}
	}
	in := &Input{RunID: x.meta.RunID, NodeID: id, Attempt: n, Spec: spec, Feedback: feedback,
		Scope: scope, Workspace: x.meta.Workspace, Started: x.sched.start, Dir: dir, Budget: x.bp.Budget, Spend: &Spend{m: x.meter},
		Logger: x.rt.logger().With("run", x.meta.RunID, "node", id, "attempt", n), Services: x.services, Redactor: x.redact}
	node := x.nodes[id]
	x.wg.Add(1)
	go func() {
		defer x.wg.Done()
		defer cancel()
		ev := x.runAttempt(ctx, node, spec, in, delay)
		select {
		case x.done <- ev:
		case <-x.runCtx.Done():
		}
	}()
}

func (x *execution) runAttempt(ctx context.Context, node Node, spec *blueprint.Node, in *Input, delay time.Duration) Event {
	ev := Event{Type: EvNodeFinished, Node: in.NodeID, Attempt: in.Attempt}
	if delay > 0 {
		select {
		case <-time.After(delay):
		case <-ctx.Done():
			ev.Error = "canceled during retry backoff"
			return ev
		}
	}
	if spec.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, spec.Timeout)
		defer cancel()
	}
	t0 := time.Now()
	res, err := safeRun(ctx, node, in)
	ev.DurationMS = time.Since(t0).Milliseconds()
	if res != nil {
		// Spent even when the attempt broke or timed out: the budget
		// counts it, or each retry would start from nothing.
		ev.Tokens, ev.Cost = res.Tokens, res.Cost
		in.Spend.settle(res.Cost)
	}
	switch {
	case spec.Timeout > 0 && errors.Is(ctx.Err(), context.DeadlineExceeded):
		ev.Outcome, ev.TimedOut = OutcomeFail, true
		ev.Feedback = fmt.Sprintf("node %s timed out after %s", in.NodeID, spec.Timeout)
		ev.Reason = ev.Feedback
	case err != nil:
		ev.Error = err.Error()
	case res == nil || (res.Outcome != OutcomePass && res.Outcome != OutcomeFail && res.Outcome != OutcomeHandoff):
		ev.Error = fmt.Sprintf("node returned an invalid result: %+v", res)
	default:
		ev.Outcome, ev.Outputs, ev.Feedback, ev.Tokens, ev.Cost = res.Outcome, res.Outputs, res.Feedback, res.Tokens, res.Cost
		ev.Artifacts, ev.Reason = res.Artifacts, res.Reason
	}
	// The result's texts are the node's (an agent's reason, a tool's
	// error): the journal keeps a few KiB of each, the attempt directory
	// all of it.
	if err := boundEvent(&ev, in.Dir, attemptRel(in.NodeID, in.Attempt), x.redact); err != nil {
		in.Logger.Warn("the attempt's whole texts were not kept", "error", err)
	}
	in.Logger.Info("node finished", "outcome", ev.Outcome, "error", ev.Error, "duration_ms", ev.DurationMS)
	return ev
}

// safeRun turns a node's panic into an error: model output or a bad
// repository must never take the harness down.
func safeRun(ctx context.Context, node Node, in *Input) (res *Result, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("node panicked: %v\n%s", r, debug.Stack())
		}
	}()
	return node.Run(ctx, in)
}

// prepare builds the run's environment through the Prepare hook.
func (x *execution) prepare(ctx context.Context, resume bool) error {
	x.services = x.rt.Services
	if x.rt.Prepare == nil {
		return nil
	}
	start := time.Now()
	inputs := x.inputs
	if inputs == nil {
		inputs = x.sched.inputs // a resumed run's, from its journal
	}
	ctx = context.WithValue(x.withNotes(ctx, "", 0), inputsKey{}, inputs)
	Notef(ctx, "setting up the workspace")
	env, err := x.rt.Prepare(secrets.NewContext(ctx, x.redact), x.dir, x.bp, resume)
	x.stage("workspace", start, err)
	if err != nil {
		return fmt.Errorf("prepare the run's environment: %w", err)
	}
	Notef(ctx, "workspace ready in %s", time.Since(start).Round(time.Millisecond))
	x.env = env
	if env.Workspace != "" {
		x.meta.Workspace = env.Workspace
	}
	x.services = x.rt.Services.Merge(env.Services)
	if len(env.Layers) > 0 {
		x.runSpan.SetAttributes(attribute.StringSlice("sandgate.sandbox.layers", env.Layers))
	}
	// The set-up happens before run_started (or an answer), so the
	// journal's times leave it out: the event carries its duration, and
	// Elapsed adds it back.
	x.pendingInfo = append(x.pendingInfo, Event{Type: EvEnvironment, Layers: env.Layers, Time: time.Now(),
		DurationMS: time.Since(start).Milliseconds()})
	return nil
}
