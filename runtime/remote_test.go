package runtime_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/sandgate/sandgate/runtime"
)

// engine plays a durable workflow engine against a Remote: it owns the
// scheduler and numbers events, the Remote only records and runs nodes.
type engine struct {
	t      *testing.T
	sched  *runtime.Scheduler
	remote *runtime.Remote
	seq    int
	sent   []runtime.Event
}

func (e *engine) send(evs ...runtime.Event) {
	for _, ev := range evs {
		e.seq++
		ev.Seq = e.seq
		if ev.Time.IsZero() {
			ev.Time = time.Now()
		}
		e.sent = append(e.sent, ev)
	}
}

// input applies an input event and returns the node attempts to start.
func (e *engine) input(ev runtime.Event) []runtime.Event {
	e.send(ev)
	cmds, err := e.sched.Apply(e.sent[len(e.sent)-1])
	if err != nil {
		e.t.Fatal(err)
	}
	e.send(cmds...)
	var starts []runtime.Event
	for _, c := range cmds {
		if c.Type == runtime.EvNodeStarted {
			starts = append(starts, c)
		}
	}
	return starts
}

func (e *engine) drive(ctx context.Context, starts []runtime.Event) {
	for len(starts) > 0 {
		s := starts[0]
		starts = starts[1:]
		// Events arrive out of order and twice, as after an activity retry.
		rev := make([]runtime.Event, 0, len(e.sent))
		for i := len(e.sent) - 1; i >= 0; i-- {
			rev = append(rev, e.sent[i])
		}
		if _, err := e.remote.Record(append(rev, e.sent...)); err != nil {
			e.t.Fatal(err)
		}
		fin, err := e.remote.Attempt(ctx, s.Node, s.Attempt, s.Feedback)
		if err != nil {
			e.t.Fatal(err)
		}
		starts = append(starts, e.input(fin)...)
	}
	if n, err := e.remote.Record(e.sent); err != nil || n != e.seq {
		e.t.Fatalf("record: journaled %d of %d: %v", n, e.seq, err)
	}
}

// TestRemoteRunsAsLocal runs the retry loop through a Remote driven by an
// engine of the test's own and checks the run directory reads as a local
// run's: the summary, the templates' state, and a journal the scheduler
// replays exactly, with the starter's labels.
func TestRemoteRunsAsLocal(t *testing.T) {
	f := newFixture(t, retryLoop("[fail, pass]", ""))
	ctx := context.Background()
	if _, _, err := f.rt.OpenRemote(ctx, f.bp, "r0", runtime.RemoteOptions{Workspace: f.ws, Labels: runtime.Labels{"team": "a b"}}); err == nil {
		t.Fatal("a label with a space opened a run")
	}
	r, info, err := f.rt.OpenRemote(ctx, f.bp, "r1", runtime.RemoteOptions{Workspace: f.ws, Labels: runtime.Labels{"team": "infra"}})
	if err != nil {
		t.Fatal(err)
	}
	e := &engine{t: t, sched: runtime.NewScheduler(f.bp), remote: r}
	starts := e.input(runtime.Event{Type: runtime.EvRunStarted, RunID: "r1", Blueprint: f.bp.Name, Inputs: map[string]any{"task": "x"}})
	e.send(info...)
	e.drive(ctx, starts)
	sum, last, err := r.Finish()
	if err != nil {
		t.Fatal(err)
	}
	if sum.Status != runtime.StatusSucceeded || sum.NodeRuns != 4 || last != e.seq+1 {
		t.Fatalf("summary %s, %d node runs, last seq %d (engine %d)", sum.Status, sum.NodeRuns, last, e.seq)
	}
	if sum.Labels["team"] != "infra" {
		t.Fatalf("labels %v", sum.Labels)
	}
	// The second implement attempt rendered the gate's feedback.
	if p := sum.Attempts[2].Outputs["prompt"]; p != "fix x: lint failed on attempt 1" {
		t.Fatalf("templates saw %q", p)
	}
	events, err := runtime.ReadJournal(filepath.Join(r.Dir(), "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if err := runtime.Replay(f.bp, events); err != nil {
		t.Fatal(err)
	}
}

// TestRemoteWorkspaceLostHandsOff checks the engine's workspace_lost input
// hands the run off with the engine's reason, and that a Remote reopened
// on the finished run takes an answer and continues on the same record.
func TestRemoteWorkspaceLostHandsOff(t *testing.T) {
	f := newFixture(t, retryLoop("[pass]", ""))
	ctx := context.Background()
	r, _, err := f.rt.OpenRemote(ctx, f.bp, "r2", runtime.RemoteOptions{Workspace: f.ws})
	if err != nil {
		t.Fatal(err)
	}
	e := &engine{t: t, sched: runtime.NewScheduler(f.bp), remote: r}
	e.input(runtime.Event{Type: runtime.EvRunStarted, RunID: "r2", Inputs: map[string]any{"task": "x"}})
	e.input(runtime.Event{Type: runtime.EvWorkspaceLost, Reason: "worker host h1 lost; the workspace was on it"})
	if _, err := r.Record(e.sent); err != nil {
		t.Fatal(err)
	}
	sum, last, err := r.Finish()
	if err != nil {
		t.Fatal(err)
	}
	if sum.Status != runtime.StatusHandedOff || sum.Kind != "workspace_lost" || sum.Reason != "worker host h1 lost; the workspace was on it" {
		t.Fatalf("got %s %s %q", sum.Status, sum.Kind, sum.Reason)
	}
	if _, err := os.Stat(filepath.Join(r.Dir(), "handoff.md")); err != nil {
		t.Fatalf("no hand-off report: %v", err)
	}
	r2, _, err := f.rt.OpenRemote(ctx, f.bp, "r2", runtime.RemoteOptions{Workspace: f.ws})
	if err != nil {
		t.Fatal(err)
	}
	e.remote, e.seq = r2, last
	e.sent = nil
	e.drive(ctx, e.input(runtime.Event{Type: runtime.EvAnswered, Node: "implement", Feedback: "go on", By: "t"}))
	sum, _, err = r2.Finish()
	if err != nil {
		t.Fatal(err)
	}
	if sum.Status != runtime.StatusSucceeded || len(sum.Answers) != 1 {
		t.Fatalf("after the answer: %s, %d answers", sum.Status, len(sum.Answers))
	}
	if _, err := os.Stat(filepath.Join(r.Dir(), "handoff.md")); err == nil {
		t.Fatal("the answered run kept its stale hand-off report")
	}
}
