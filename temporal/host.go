package temporal

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/sandgate/sandgate/runtime"
)

// Host is a worker host's side of the runs it holds: their workspaces and
// run directories, in this process's memory and on this host's disk.
type Host struct {
	// Name identifies the host in messages; Queue is its own task queue.
	Name  string
	Queue string
	// Runtime carries the registry, RunsDir, Services and Secrets every
	// run uses; its Prepare is replaced per run by Prepare.
	Runtime *runtime.Runtime
	// Prepare builds the environment of a run on repo at rev (for the
	// sandbox: nodes.Environment); nil runs nodes in the repo directory.
	Prepare func(repo, rev string) runtime.Prepare
	// MaxRuns bounds the runs this host holds at once (0: no bound).
	MaxRuns int
	// Heartbeat is how often a running attempt heartbeats (default 500ms;
	// the worker's MaxHeartbeatThrottleInterval must not be longer for a
	// cancel to reach the node that fast).
	Heartbeat time.Duration

	mu   sync.Mutex
	runs map[string]*runtime.Remote
	// gates and claims keep an activity's new try off the run its earlier
	// try still holds in this process (hostgate.go).
	gates  runGates
	claims nodeClaims
}

// Runs is the number of runs the host holds now.
func (h *Host) Runs() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.runs)
}

// Close stops every run the host holds, killing their boxes; their
// directories stay, so a worker started again on this host continues
// them. Call it after stopping the host's workers.
func (h *Host) Close() error {
	h.mu.Lock()
	runs := h.runs
	h.runs = nil
	h.mu.Unlock()
	var errs []error
	for _, r := range runs {
		errs = append(errs, r.Abort())
	}
	return errors.Join(errs...)
}

func (h *Host) runtimeFor(repo, rev string) *runtime.Runtime {
	rt := *h.Runtime
	if h.Prepare != nil {
		rt.Prepare = h.Prepare(repo, rev)
	}
	return &rt
}

// Open prepares a run's workspace here, or reopens it for an answer.
func (h *Host) Open(ctx context.Context, in openInput) (openResult, error) {
	// Heartbeat while preparing: a worker killed mid-open is noticed after
	// the heartbeat timeout, not the activity's 30 minutes.
	defer h.beating(ctx)()
	res := openResult{Queue: h.Queue, Host: h.Name, Dir: filepath.Join(h.runsDir(), in.RunID)}
	leave, err := h.gates.enter(ctx, in.RunID)
	if err != nil {
		return res, err
	}
	defer leave()
	h.mu.Lock()
	if h.runs == nil {
		h.runs = map[string]*runtime.Remote{}
	}
	_, held := h.runs[in.RunID]
	busy := h.MaxRuns > 0 && len(h.runs) >= h.MaxRuns
	h.mu.Unlock()
	if in.Move != nil && (held || !busy) {
		return h.rebuild(ctx, in, res)
	}
	if held {
		return res, nil // a retry of an open that succeeded
	}
	if busy {
		return res, temporal.NewApplicationError(fmt.Sprintf("host %s holds %d runs (--max-runs)", h.Name, h.MaxRuns), "HostBusy")
	}
	bp, err := h.Runtime.Registry.Parse(in.Run.File, in.Run.Source)
	if err != nil {
		return res, temporal.NewNonRetryableApplicationError(err.Error(), "BlueprintInvalid", nil)
	}
	r, info, err := h.runtimeFor(in.Run.Repo, in.Run.Rev).OpenRemote(ctx, bp, in.RunID, runtime.RemoteOptions{Workspace: in.Run.Repo, Labels: in.Run.Labels})
	if err != nil {
		// A workspace that cannot be made (no such repository, no such
		// commit) will not be made by trying again on another host.
		return res, openFailed(err)
	}
	if ctx.Err() != nil {
		// The server gave up on this try while it prepared (a heartbeat
		// answered "not found"), and its next try may have placed the run
		// on another host: a copy kept here would be held by nobody.
		_ = r.Abort()
		_ = os.RemoveAll(res.Dir)
		return res, ctx.Err()
	}
	h.mu.Lock()
	h.runs[in.RunID] = r
	h.mu.Unlock()
	res.Info = info
	return res, nil
}

// openFailed classes an OpenRemote error: a run another process holds
// (a worker of this host not yet dead) may be free on the next try; any
// other error will not go away by trying again.
func openFailed(err error) error {
	if errors.Is(err, runtime.ErrRunBusy) {
		return temporal.NewApplicationError(err.Error(), "RunBusy")
	}
	return temporal.NewNonRetryableApplicationError(err.Error(), "PrepareFailed", nil)
}

func (h *Host) runsDir() string {
	return orDefault(h.Runtime.RunsDir, filepath.Join(".sandgate", "runs"))
}

// remote finds a run this process holds, or reopens it from its directory
// (this worker restarted on the same host: the workspace is still here).
// A reopened copy is not held yet (reopened true): hold it once checked.
func (h *Host) remote(ctx context.Context, runID, repo, rev string) (r *runtime.Remote, reopened bool, err error) {
	h.mu.Lock()
	r = h.runs[runID]
	h.mu.Unlock()
	if r != nil {
		return r, false, nil
	}
	dir := filepath.Join(h.runsDir(), runID)
	bp, err := h.Runtime.Registry.Load(filepath.Join(dir, "blueprint.yaml"))
	if err != nil {
		return nil, false, temporal.NewNonRetryableApplicationError(fmt.Sprintf("host %s does not hold run %s: %v", h.Name, runID, err), "RunClosed", nil)
	}
	r, _, err = h.runtimeFor(repo, rev).OpenRemote(ctx, bp, runID, runtime.RemoteOptions{Workspace: repo})
	if err != nil {
		return nil, false, err
	}
	return r, true, nil
}

// hold keeps a copy reopened at the run's gate: no other copy can be
// held meanwhile (every writer of h.runs holds the run's gate).
func (h *Host) hold(runID string, r *runtime.Remote) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.runs == nil {
		h.runs = map[string]*runtime.Remote{}
	}
	h.runs[runID] = r
}

// Node journals the events it carries and runs one node attempt,
// heartbeating; a cancel delivered through the heartbeat ends the
// attempt's context, which kills its box command.
func (h *Host) Node(ctx context.Context, in nodeInput) (nodeResult, error) {
	// Heartbeat from the start (a reopen and the check take time); the
	// heartbeat stops, and is waited for, before the activity returns.
	defer h.beating(ctx)()
	actx, release, err := h.claims.claim(ctx, in.RunID, in.Node)
	if err != nil {
		return nodeResult{}, err
	}
	defer release()
	r, err := h.checked(ctx, in)
	if err != nil {
		return nodeResult{}, err
	}
	n, err := r.Record(in.Events)
	if err != nil {
		return nodeResult{}, err
	}
	ev, err := r.Attempt(actx, in.Node, in.Attempt, in.Feedback)
	if err != nil {
		return nodeResult{}, temporal.NewNonRetryableApplicationError(err.Error(), "RunClosed", nil)
	}
	if actx.Err() != nil {
		return nodeResult{}, actx.Err()
	}
	// The change as the attempt left it, recorded by the harness now: a
	// run moved to another host is rebuilt from this, never from what a
	// box may write later.
	ch, why := takeChange(r, in.Have)
	return nodeResult{Event: ev, Journaled: n, Change: ch, NoChange: why}, nil
}

// checked is the run's copy a node may run on: the one held here, or one
// reopened from disk, at the run's gate so no other activity of the run
// opens it at once. A copy reopened from disk, or one an earlier try of
// this activity ran on, may hold what a killed or cut-off attempt wrote:
// it runs nothing unless it is the recorded workspace (diverge.go).
func (h *Host) checked(ctx context.Context, in nodeInput) (*runtime.Remote, error) {
	leave, err := h.gates.enter(ctx, in.RunID)
	if err != nil {
		return nil, err
	}
	defer leave()
	r, reopened, err := h.remote(ctx, in.RunID, in.Repo, in.Rev)
	if err != nil {
		return nil, err
	}
	if reopened || activity.GetInfo(ctx).Attempt > 1 {
		if err := checkRecorded(h.Name, r, in); err != nil {
			if reopened {
				_ = r.Abort()
			}
			return nil, err
		}
	}
	if reopened {
		h.hold(in.RunID, r)
	}
	return r, nil
}

// beating heartbeats until the function it returns is called, which
// waits for the last heartbeat: none may follow the activity's return.
func (h *Host) beating(ctx context.Context) func() {
	hctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); h.heartbeat(hctx) }()
	return func() { stop(); <-done }
}

func (h *Host) heartbeat(ctx context.Context) {
	every := h.Heartbeat
	if every <= 0 {
		every = 500 * time.Millisecond
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		activity.RecordHeartbeat(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Finish journals the rest of the run and wraps it up: attempts still
// running are stopped, the hand-off report written, the box closed.
func (h *Host) Finish(ctx context.Context, in finishInput) (finishResult, error) {
	defer h.beating(ctx)()
	dir := filepath.Join(h.runsDir(), in.RunID)
	if done, ok := closedAt(dir, in.Events); ok {
		return finishResult{Journaled: done, Dir: dir}, nil // a retry of a finish that succeeded
	}
	leave, err := h.gates.enter(ctx, in.RunID)
	if err != nil {
		return finishResult{}, err
	}
	defer leave()
	r, _, err := h.remote(ctx, in.RunID, in.Repo, in.Rev)
	if err != nil {
		return finishResult{}, err
	}
	h.mu.Lock()
	delete(h.runs, in.RunID)
	h.mu.Unlock()
	if _, err := r.Record(in.Events); err != nil {
		return finishResult{}, errors.Join(err, r.Abort())
	}
	_, last, err := r.Finish()
	if err != nil {
		return finishResult{}, err
	}
	return finishResult{Journaled: last, Dir: dir}, nil
}

// closedAt reports whether the run's journal already holds every event
// and the run_closed that Finish writes after them.
func closedAt(dir string, events []runtime.Event) (int, bool) {
	journal, err := runtime.ReadJournal(filepath.Join(dir, "events.jsonl"))
	if err != nil || len(journal) == 0 {
		return 0, false
	}
	last := journal[len(journal)-1]
	want := 0
	if len(events) > 0 {
		want = events[len(events)-1].Seq
	}
	if last.Type != runtime.EvRunClosed || last.Seq <= want {
		return 0, false
	}
	return last.Seq, true
}
