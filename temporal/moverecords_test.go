package temporal

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/testsuite"

	"github.com/sandgate/sandgate/internal/gitfixture"
	"github.com/sandgate/sandgate/nodes"
	"github.com/sandgate/sandgate/runtime"
	"github.com/sandgate/sandgate/temporal/internal/runfixture"
)

// moving numbers a run's events as the workflow does, with its scheduler,
// for activity tests that play the workflow's part.
type moving struct {
	sched   *runtime.Scheduler
	events  []runtime.Event
	next    []runtime.Event
	started time.Time
}

func (m *moving) input(t *testing.T, ev runtime.Event) {
	t.Helper()
	ev.Seq, ev.Time = len(m.events)+1, m.started
	m.events = append(m.events, ev)
	cmds, err := m.sched.Apply(ev)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cmds {
		c.Seq, c.Time = len(m.events)+1, m.started
		m.events = append(m.events, c)
		if c.Type == runtime.EvNodeStarted {
			m.next = append(m.next, c)
		}
	}
}

// TestMoveAfterPushPushesOnce: host a commits and pushes, and is lost
// before the push's result reaches the workflow. Host b is rebuilt from
// the record (the change and the records taken after the commit), runs
// the push again and finds the remote branch at the same SHA: one ref
// update, the push a no-op success.
func TestMoveAfterPushPushesOnce(t *testing.T) {
	repo := t.TempDir()
	if err := gitfixture.Seed(repo, map[string]string{"hello.txt": "hello\n"}, "init"); err != nil {
		t.Fatal(err)
	}
	remote, updates := filepath.Join(t.TempDir(), "remote.git"), filepath.Join(t.TempDir(), "updates")
	if err := gitfixture.Remote(repo, remote, gitfixture.LogUpdates(updates)); err != nil {
		t.Fatal(err)
	}
	env := (&testsuite.WorkflowTestSuite{}).NewTestActivityEnvironment()
	sandboxHost(t, env, "a")
	sandboxHost(t, env, "b")
	run := RunInput{File: "bp.yaml", Source: []byte(runfixture.PushBP(remote)), Repo: repo}
	bp, err := nodes.NewRegistry().Parse(run.File, run.Source)
	if err != nil {
		t.Fatal(err)
	}
	m := &moving{sched: runtime.NewScheduler(bp), started: time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)}
	if _, err := execute[openResult](t, env, "a.open", openInput{RunID: "push", Run: run}); err != nil {
		t.Fatal(err)
	}
	m.input(t, runtime.Event{Type: runtime.EvRunStarted, RunID: "push", Blueprint: bp.Name})
	var change *Change
	acked := 0
	attempt := func(host string) nodeResult {
		t.Helper()
		c := m.next[0]
		in := nodeInput{RunID: "push", Repo: repo, Events: m.events[acked:], Node: c.Node, Attempt: c.Attempt}
		if change != nil {
			in.Have = change.Fingerprint
		}
		res, err := execute[nodeResult](t, env, host+".node", in)
		if err != nil || res.Event.Outcome != runtime.OutcomePass || res.NoChange != "" {
			t.Fatalf("%s on %s: %+v %v", c.Node, host, res, err)
		}
		return res
	}
	for range 3 { // edit, guard, commit: their results recorded
		res := attempt("a")
		if res.Change != nil {
			change = res.Change
		}
		acked = len(m.events)
		m.next = m.next[1:]
		m.input(t, res.Event)
	}
	if change == nil || len(change.Records) == 0 || !strings.Contains(string(change.Records), "commit.json") {
		t.Fatalf("the recorded change after the commit carries no commit record: %+v", change)
	}
	var sha any
	for _, ev := range m.events {
		if ev.Type == runtime.EvNodeFinished && ev.Node == "commit" {
			sha = ev.Outputs["commit"]
		}
	}
	if p := attempt("a"); p.Event.Outputs["pushed"] != true {
		t.Fatalf("host a's push: %+v", p.Event)
	}
	// Host a is lost: its push's result never arrives.
	if _, err := execute[openResult](t, env, "b.open", openInput{RunID: "push", Run: run, Move: &moveInput{From: "a", Events: m.events, Change: change}}); err != nil {
		t.Fatal(err)
	}
	acked = len(m.events)
	p := attempt("b")
	if p.Event.Outputs["pushed"] != false {
		t.Fatalf("host b's push of the same commit must find it there: %+v", p.Event)
	}
	if tip, err := gitfixture.Git(remote, "rev-parse", runfixture.PushBranch); err != nil || strings.TrimSpace(tip) != sha {
		t.Fatalf("remote %s at %q (%v), want host a's commit %v", runfixture.PushBranch, tip, err, sha)
	}
	if n, log := gitfixture.Updates(updates, runfixture.PushBranch); n != 1 {
		t.Fatalf("the remote's ref updates:\n%s\nwant one", log)
	}
}
