package temporal

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/testsuite"

	"github.com/sandgate/sandgate/internal/gitfixture"
	"github.com/sandgate/sandgate/runtime"
	"github.com/sandgate/sandgate/temporal/internal/runfixture"
)

// restarted is host old's worker started again: a new process, the same
// runs directory, holding nothing in memory.
func restarted(t *testing.T, env *testsuite.TestActivityEnvironment, old *Host, name string) *Host {
	h := &Host{Name: old.Name, Queue: old.Queue, Runtime: old.Runtime, Prepare: old.Prepare}
	env.RegisterActivityWithOptions(h.Node, activity.RegisterOptions{Name: name + ".node"})
	t.Cleanup(func() { _ = h.Close() })
	return h
}

// record numbers a run's events as the workflow does, with the
// scheduler's commands after each input.
type record struct {
	sched  *runtime.Scheduler
	events []runtime.Event
}

func newRecord(t *testing.T, h *Host, src string) *record {
	bp, err := h.Runtime.Registry.Parse("bp.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return &record{sched: runtime.NewScheduler(bp)}
}

// input records ev and the commands that follow and returns them.
func (r *record) input(t *testing.T, ev runtime.Event) []runtime.Event {
	t.Helper()
	from := len(r.events)
	add := func(ev runtime.Event) runtime.Event {
		ev.Seq, ev.Time = len(r.events)+1, time.Now().UTC()
		r.events = append(r.events, ev)
		return ev
	}
	cmds, err := r.sched.Apply(add(ev))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cmds {
		add(c)
	}
	return slices.Clone(r.events[from:])
}

// TestNodeRefusesAWorkspaceACutOffAttemptWrote is the attack on a worker
// restarted on its host: the box of host a's attempt "late" writes
// evil.txt, and the worker dies before the attempt's result reaches the
// workflow. The restarted worker reopens the run from disk; the retry,
// which carries the recorded change (edit's), must not run on the copy
// holding evil.txt. A copy that is the recorded one runs.
func TestNodeRefusesAWorkspaceACutOffAttemptWrote(t *testing.T) {
	repo := t.TempDir()
	if err := gitfixture.Seed(repo, map[string]string{"hello.txt": "hello\n"}, "init"); err != nil {
		t.Fatal(err)
	}
	env := (&testsuite.WorkflowTestSuite{}).NewTestActivityEnvironment()
	a := sandboxHost(t, env, "a")
	run := RunInput{File: "bp.yaml", Source: []byte(moveBP), Repo: repo}
	if _, err := execute[openResult](t, env, "a.open", openInput{RunID: "cut", Run: run}); err != nil {
		t.Fatal(err)
	}
	rec := newRecord(t, a, moveBP)
	events := rec.input(t, runtime.Event{Type: runtime.EvRunStarted, RunID: "cut", Blueprint: "mv"})
	edit, err := execute[nodeResult](t, env, "a.node", nodeInput{RunID: "cut", Repo: repo, Events: events, Node: "edit", Attempt: 1})
	if err != nil || edit.Change == nil {
		t.Fatalf("edit: %+v %v", edit, err)
	}
	late := nodeInput{RunID: "cut", Repo: repo, Events: rec.input(t, edit.Event), Node: "late", Attempt: 1, Have: edit.Change.Fingerprint, Check: true}
	cut, err := execute[nodeResult](t, env, "a.node", late)
	if err != nil || cut.Change == nil || !strings.Contains(string(cut.Change.Patch), "evil.txt") {
		t.Fatalf("the box's write is not in host a's workspace: %+v %v", cut, err)
	}
	_ = a.Close() // the worker dies; the run's directory stays

	b := restarted(t, env, a, "a2")
	_, err = execute[nodeResult](t, env, "a2.node", late)
	if !diverged(err) || !strings.Contains(err.Error(), "a cut-off attempt wrote to it") {
		t.Fatalf("the retry ran on the copy holding the cut-off write: %v", err)
	}
	if b.Runs() != 0 {
		t.Fatal("the refused copy is still held")
	}
	// Had the attempt's result been recorded, the copy is the record's.
	recorded := late
	recorded.Events, recorded.Have = nil, cut.Change.Fingerprint
	c := restarted(t, env, a, "a3")
	again, err := execute[nodeResult](t, env, "a3.node", recorded)
	if err != nil || again.Event.Type != runtime.EvNodeFinished || c.Runs() != 1 {
		t.Fatalf("the recorded copy did not run: %+v %v", again, err)
	}
}

// cutBP appends a and b to s.txt; check fails the run unless the file is
// exactly those two lines.
var cutBP = runfixture.AppendsBP("cut", "s.txt", []string{"a", "b"}, nil)

// TestWorkflowRetryDoesNotSeeACutOffWrite: b's box appends its line and
// the attempt is cut off before its result is recorded (the worker dies
// and restarts on the host, or the activity fails). The activity's retry
// on the same host must not run b on top of that write: the run is
// rebuilt from the record, b runs once more, and check finds a, b.
func TestWorkflowRetryDoesNotSeeACutOffWrite(t *testing.T) {
	for _, tc := range []struct {
		name    string
		restart bool
	}{{"worker restarted", true}, {"activity failed", false}} {
		t.Run(tc.name, func(t *testing.T) {
			repo := t.TempDir()
			if err := gitfixture.Seed(repo, map[string]string{"README": "x\n"}, "init"); err != nil {
				t.Fatal(err)
			}
			f := newFixtureOn(t, newSandboxHost(t, "h1", "sandgate@h1"))
			env, h := f.env, f.host
			env.SetTestTimeout(5 * time.Minute) // real boxes: the 3 s default is too short on a loaded machine
			cut := false
			env.OnActivity(ActivityNode, mock.Anything, mock.Anything).Return(func(ctx context.Context, in nodeInput) (nodeResult, error) {
				res, err := h.Node(ctx, in)
				if in.Node != "b" || cut {
					return res, err
				}
				cut = true
				if tc.restart {
					_ = h.Close() // the worker dies; it comes back holding nothing
				}
				return nodeResult{}, errors.New("cut off after b's box wrote")
			})
			env.ExecuteWorkflow(WorkflowName, RunInput{File: "bp.yaml", Source: []byte(cutBP), Repo: repo})
			var st Status
			if err := env.GetWorkflowError(); err != nil || env.GetWorkflowResult(&st) != nil {
				t.Fatalf("workflow: %v", err)
			}
			if st.Status != runtime.StatusSucceeded {
				t.Fatalf("the retry saw the cut-off write: %+v", st)
			}
			restored := 0
			for _, ev := range f.journal(t, st) {
				if ev.Type == runtime.EvRunResumed && strings.Contains(ev.Reason, "is not the recorded one") {
					restored++
				}
			}
			if restored != 1 {
				t.Fatalf("%d rebuilds from the record, want 1", restored)
			}
		})
	}
}
