package runtime

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/sandgate/sandgate/blueprint"
)

// Remote is the host side of a run whose scheduler lives elsewhere, in a
// durable workflow engine that replays its own history: the engine decides,
// the host keeps the run directory (journal, hand-off files) and the
// environment, and runs node attempts when told. The run directory is the
// same as a local run's, so show, the inbox and answers read it alike.
//
// The engine numbers every event (Seq) it sends; Record writes them in that
// order whatever order they arrive in, and ignores those already written,
// so an engine may resend events after a retry. The host applies the input
// events to a scheduler of its own, which mirrors the engine's and gives
// node templates their expression state.
type Remote struct {
	mu sync.Mutex
	// envMu keeps Change and Restore from reading the workspace while
	// Finish or Abort closes it (a cancel finishes the run while a node
	// activity still takes its change).
	envMu   sync.Mutex
	x       *execution
	pending map[int]Event
	closed  bool
}

// RemoteOptions are what a remote run's record keeps from its start, as
// RunOptions for a local run: the engine carries the inputs as events.
type RemoteOptions struct {
	// Workspace is the repository the run works on (default ".").
	Workspace string
	// Labels are the starter's names for the run (CheckLabels), kept in
	// meta.json and run.json as a local run's.
	Labels Labels
}

// OpenRemote opens a run directory under rt.RunsDir for an engine: a new
// run is created (blueprint.yaml, meta.json, an empty journal) and its
// environment prepared; an existing one is reopened with its journal
// replayed and its environment prepared with resume set, as Answer does.
// Information the run's record should carry (the isolation layers) is
// returned as events for the engine to number and send back.
func (rt *Runtime) OpenRemote(ctx context.Context, bp *blueprint.Blueprint, runID string, opts RemoteOptions) (*Remote, []Event, error) {
	if err := CheckLabels(opts.Labels); err != nil {
		return nil, nil, err
	}
	dir := filepath.Join(rt.runsDir(), runID)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, nil, fmt.Errorf("create run directory: %w", err)
	}
	// One execution per run directory, as for local runs: a second worker
	// process on this host must not journal into the same run.
	lock, err := lockRun(dir)
	if err != nil {
		return nil, nil, err
	}
	if events, err := ReadJournal(filepath.Join(dir, "events.jsonl")); err == nil && len(events) > 0 {
		s, err := rt.load(dir, events)
		if err != nil {
			lock.Close()
			return nil, nil, err
		}
		s.lock = lock
		x, err := rt.reopen(ctx, s)
		if err != nil {
			return nil, nil, err
		}
		if finished(events) {
			x.final = &events[len(events)-1]
		}
		return rt.remote(x)
	}
	nodes, err := rt.Registry.build(bp)
	if err != nil {
		lock.Close()
		return nil, nil, err
	}
	ws, _ := filepath.Abs(orDefault(opts.Workspace, "."))
	m := meta{RunID: runID, Blueprint: bp.File, Workspace: ws, Labels: opts.Labels}
	if err := writeFiles(rt.redactor(bp), dir, map[string][]byte{"blueprint.yaml": bp.Source, "meta.json": mustJSON(m)}); err != nil {
		lock.Close()
		return nil, nil, err
	}
	x, err := rt.newExecution(bp, nodes, dir, m, 0, lock)
	if err != nil {
		return nil, nil, err
	}
	if err := x.prepare(ctx, false); err != nil {
		err = x.abort(err)
		_ = os.RemoveAll(dir)
		return nil, nil, err
	}
	return rt.remote(x)
}

func (rt *Runtime) remote(x *execution) (*Remote, []Event, error) {
	info := x.pendingInfo
	x.pendingInfo = nil
	return &Remote{x: x, pending: map[int]Event{}}, info, nil
}

// Dir is the run directory.
func (r *Remote) Dir() string { return r.x.dir }

// Journaled is the sequence number of the last event written.
func (r *Remote) Journaled() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.x.journal.seq
}

// Record writes the engine's events in Seq order, applies the inputs to
// the mirror scheduler and makes the journal durable. It returns the
// sequence number of the last event written: events after a gap wait for
// the gap to be filled.
func (r *Remote) Record(events []Event) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return r.x.journal.seq, errors.New("run record is closed")
	}
	for _, ev := range events {
		if ev.Seq > r.x.journal.seq {
			r.pending[ev.Seq] = ev
		}
	}
	for {
		ev, ok := r.pending[r.x.journal.seq+1]
		if !ok {
			break
		}
		delete(r.pending, ev.Seq)
		if err := r.apply(ev); err != nil {
			return r.x.journal.seq, err
		}
	}
	return r.x.journal.seq, r.x.journal.Sync()
}

// apply journals one event and keeps the mirror scheduler in step.
func (r *Remote) apply(ev Event) error {
	want := ev.Seq
	rec, err := r.x.record(ev)
	if err != nil {
		return err
	}
	if rec.Seq != want {
		return fmt.Errorf("journal: event %s got seq %d, the engine numbered it %d", ev.Type, rec.Seq, want)
	}
	switch {
	case ev.Type.IsInput():
		if ev.Type == EvRunStarted || ev.Type == EvAnswered {
			r.x.started = rec.Time
		}
		if ev.Type == EvAnswered {
			r.x.final = nil
			for _, f := range []string{"handoff.json", "handoff.md"} {
				_ = os.Remove(filepath.Join(r.x.dir, f))
			}
		}
		if _, err := r.x.sched.Apply(rec); err != nil {
			return fmt.Errorf("mirror scheduler: %w", err)
		}
	case ev.Type == EvRunFinished:
		r.x.final = &rec
	}
	return nil
}

// Attempt runs one node attempt, which the engine has recorded as started
// (Record it first: the node's templates see the state at its start). The
// attempt's context ends when ctx does or when the run is finished.
// A node that breaks or fails is a result, not an error.
func (r *Remote) Attempt(ctx context.Context, node string, attempt int, feedback string) (Event, error) {
	r.mu.Lock()
	spec, ok := r.x.bp.Nodes[node]
	impl := r.x.nodes[node]
	if !ok || impl == nil || r.closed {
		r.mu.Unlock()
		return Event{}, fmt.Errorf("run %s: no node %q to run (or the run is closed)", r.x.meta.RunID, node)
	}
	scope := &blueprint.Scope{Inputs: r.x.sched.inputs, Feedback: feedback, Run: r.x.sched.runInfo(time.Now())}
	if len(spec.Templates) > 0 {
		scope = r.x.sched.Snapshot(time.Now(), feedback)
	}
	if r.x.meter == nil {
		// The engine runs a run's attempts on this host only: one meter
		// here counts parallel attempts' spending live, from the
		// journaled cost when the first of them started (as launch does).
		r.x.meter = &meter{total: r.x.sched.cost}
	}
	spend := &Spend{m: r.x.meter}
	r.x.wg.Add(1)
	r.mu.Unlock()
	defer r.x.wg.Done()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(r.x.runCtx, cancel)
	defer stop()
	in := &Input{RunID: r.x.meta.RunID, NodeID: node, Attempt: attempt, Spec: spec, Feedback: feedback,
		Scope: scope, Workspace: r.x.meta.Workspace, Dir: filepath.Join(r.x.dir, "nodes", node, strconv.Itoa(attempt)),
		Budget: r.x.bp.Budget, Spend: spend,
		Logger: r.x.rt.logger().With("run", r.x.meta.RunID, "node", node, "attempt", attempt), Services: r.x.services, Redactor: r.x.redact}
	return r.x.runAttempt(ctx, impl, spec, in, 0), nil
}

// Finish wraps a finished run up as a local run does: running attempts are
// stopped, a handed-off run's change is saved with its hand-off report,
// the environment is closed (and discarded unless an answer may continue
// it), and run_closed, run.json and the summary follow. Every event up to
// run_finished must have been recorded. It returns the summary and the
// last sequence number written.
func (r *Remote) Finish() (*Summary, int, error) {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil, 0, errors.New("run record is closed")
	}
	r.closed = true
	final := r.x.final
	r.mu.Unlock()
	if final == nil {
		return nil, 0, errors.Join(errors.New("finish: the run has not finished (no run_finished recorded)"), r.x.abort(nil))
	}
	seq := r.x.journal.seq
	r.envMu.Lock()
	defer r.envMu.Unlock()
	sum, err := r.x.finish()
	return sum, seq + 1, err
}

// Abort stops the run's attempts and closes its environment and journal
// without finishing the run; a later OpenRemote continues it.
func (r *Remote) Abort() error {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil
	}
	r.closed = true
	r.mu.Unlock()
	r.envMu.Lock()
	defer r.envMu.Unlock()
	return r.x.abort(nil)
}

// ErrNoRebuild says the run's environment cannot carry its change to
// another host (no Patch or no Apply): a lost host ends it in a hand-off.
var ErrNoRebuild = errors.New("the run's environment cannot record and re-apply its change (no Patch/Apply)")

// Change returns the run's change so far as a patch, taken by the harness
// from the workspace (Environment.Patch).
func (r *Remote) Change() ([]byte, error) {
	r.envMu.Lock()
	defer r.envMu.Unlock()
	if r.isClosed() {
		return nil, errors.New("run record is closed")
	}
	env := r.x.env
	if env == nil || env.Patch == nil || env.Apply == nil {
		return nil, ErrNoRebuild
	}
	return env.Patch()
}

// Restore applies a recorded change to the fresh workspace of a run opened
// on this host to continue a run whose host was lost.
func (r *Remote) Restore(patch []byte) error {
	r.envMu.Lock()
	defer r.envMu.Unlock()
	if r.isClosed() {
		return errors.New("run record is closed")
	}
	env := r.x.env
	if env == nil || env.Patch == nil || env.Apply == nil {
		return ErrNoRebuild
	}
	if len(patch) == 0 {
		return nil
	}
	return env.Apply(patch)
}

func (r *Remote) isClosed() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.closed
}
