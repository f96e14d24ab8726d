package promote_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sandgate/sandgate/blueprint"
	"github.com/sandgate/sandgate/internal/ghfake"
	"github.com/sandgate/sandgate/internal/gitfixture"
	"github.com/sandgate/sandgate/nodes"
	"github.com/sandgate/sandgate/nodes/internal/nodetest"
	"github.com/sandgate/sandgate/runtime"
)

// engine plays a durable engine's part (as temporal/ does) without one:
// it holds the run's record, which outlives every host (the scheduler,
// the numbered events, the attempts still to run), and runs attempts on a
// host's runtime.Remote. A run can so be cut off after any node and
// rebuilt on another host from its journal, change and records alone.
type engine struct {
	t       *testing.T
	src     string
	bp      *blueprint.Blueprint
	sched   *runtime.Scheduler
	events  []runtime.Event
	pending []runtime.Event
	started time.Time
}

func newEngine(t *testing.T, h *nodetest.Harness, src string, started time.Time) *engine {
	t.Helper()
	bp, err := h.RT.Registry.Parse("move.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	e := &engine{t: t, src: src, bp: bp, sched: runtime.NewScheduler(bp), started: started}
	e.input(runtime.Event{Type: runtime.EvRunStarted, RunID: "moving", Blueprint: bp.Name, Time: started})
	return e
}

// emit numbers an event and stamps it with the run's recorded time.
func (e *engine) emit(ev runtime.Event) runtime.Event {
	ev.Seq = len(e.events) + 1
	if ev.Time.IsZero() {
		ev.Time = e.started
	}
	e.events = append(e.events, ev)
	return ev
}

// input records an input event and the commands that follow it.
func (e *engine) input(ev runtime.Event) {
	cmds, err := e.sched.Apply(e.emit(ev))
	if err != nil {
		e.t.Fatal(err)
	}
	for _, c := range cmds {
		if c := e.emit(c); c.Type == runtime.EvNodeStarted {
			e.pending = append(e.pending, c)
		}
	}
}

// open opens the run on a host (a harness: its own runs and cache
// directories), fresh: nothing of another host's comes along.
func (e *engine) open(h *nodetest.Harness) *runtime.Remote {
	e.t.Helper()
	// Each host parses the blueprint with its own registry, as a worker
	// does with the source the workflow carries.
	bp, err := h.RT.Registry.Parse("move.yaml", []byte(e.src))
	if err != nil {
		e.t.Fatal(err)
	}
	r, _, err := h.RT.OpenRemote(context.Background(), bp, "moving", runtime.RemoteOptions{Workspace: h.Repo})
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { _ = r.Abort() })
	return r
}

// attempt runs the next attempt on r; with keep its result is recorded,
// else it is lost with the host (the attempt ran, its report never
// arrived) and stays pending.
func (e *engine) attempt(r *runtime.Remote, keep bool) runtime.Event {
	e.t.Helper()
	c := e.pending[0]
	if _, err := r.Record(e.events); err != nil {
		e.t.Fatal(err)
	}
	fin, err := r.Attempt(context.Background(), c.Node, c.Attempt, c.Feedback)
	if err != nil {
		e.t.Fatal(err)
	}
	if fin.Outcome != runtime.OutcomePass {
		e.t.Fatalf("%s#%d: %s %s %s", c.Node, c.Attempt, fin.Outcome, fin.Reason, fin.Error)
	}
	if keep {
		e.pending = e.pending[1:]
		e.input(fin)
	}
	return fin
}

// state is what the engine records after an attempt: the change and the
// harness's records.
type state struct{ patch, records []byte }

func take(t *testing.T, r *runtime.Remote) state {
	t.Helper()
	patch, err := r.Change()
	if err != nil {
		t.Fatal(err)
	}
	records, err := r.Records()
	if err != nil {
		t.Fatal(err)
	}
	return state{patch, records}
}

// move rebuilds the run on h from the record: base, change, records,
// journal.
func (e *engine) move(h *nodetest.Harness, s state) *runtime.Remote {
	e.t.Helper()
	r := e.open(h)
	if err := r.Restore(s.patch); err != nil {
		e.t.Fatal(err)
	}
	if err := r.RestoreRecords(s.records); err != nil {
		e.t.Fatal(err)
	}
	return r
}

const movePipeline = `version: 1
name: moving
start: fix
nodes:
  fix: {type: shell, run: "echo v1 > f.txt", next: guard}
  guard: {type: protect, paths: ["ci/**"], on_pass: commit, on_fail: stuck}
  commit: {type: git_commit, branch: fix/f, message: "fix f.txt", next: push}
  push: {type: git_push, remote: REMOTE, on_pass: review, on_fail: stuck}
  review: {type: review, queue: github, repo: acme/calc, base_url: API, token_env: SANDGATE_TEST_GH_TOKEN, next: done}
  done: {type: succeed}
  stuck: {type: handoff}
`

// TestCommitIsTheSameOnAFreshWorkspace: the same recorded run (start
// time, change, parent, message) committed on two hosts' fresh
// workspaces gives one SHA; another start time gives another.
func TestCommitIsTheSameOnAFreshWorkspace(t *testing.T) {
	repo := nodetest.SeedRepo(t)
	src := strings.NewReplacer("REMOTE", t.TempDir(), "API", "https://api.github.com").Replace(movePipeline)
	at := time.Date(2026, 12, 6, 15, 0, 0, 0, time.UTC)
	commit := func(started time.Time) string {
		e := newEngine(t, nodetest.NewHarness(t, repo), src, started)
		r := e.open(nodetest.NewHarness(t, repo))
		for range 2 {
			e.attempt(r, true)
		}
		return e.attempt(r, true).Outputs["commit"].(string)
	}
	first, second, later := commit(at), commit(at), commit(at.Add(time.Hour))
	if first != second {
		t.Fatalf("the same recorded commit made twice: %s, then %s", first, second)
	}
	if later == first {
		t.Fatalf("a run started an hour later made the same commit %s: the date is not the run's", first)
	}
}

// TestMovedRunPushesAndReviewsOnce: host a commits and pushes, and is lost
// before the push's result is recorded; host b, rebuilt from the record,
// pushes again (a no-op: the branch holds that SHA already) and opens the
// pull request, and is lost before that is recorded; host c reviews
// again. The remote's branch moved once, to host a's commit, and GitHub
// holds one pull request.
func TestMovedRunPushesAndReviewsOnce(t *testing.T) {
	repo := nodetest.SeedRepo(t)
	updates := filepath.Join(t.TempDir(), "updates")
	remote := retryRemote(t, repo, gitfixture.LogUpdates(updates))
	gh := ghfake.New("gh-secret", "acme/calc")
	defer gh.Close()
	t.Setenv("SANDGATE_TEST_GH_TOKEN", "gh-secret")
	allow := nodes.Options{AllowEndpoints: []string{gh.API.URL}}
	hosts := []*nodetest.Harness{nodetest.NewHarnessWith(t, repo, allow), nodetest.NewHarnessWith(t, repo, allow), nodetest.NewHarnessWith(t, repo, allow)}
	src := strings.NewReplacer("REMOTE", remote, "API", gh.API.URL).Replace(movePipeline)
	e := newEngine(t, hosts[0], src, time.Now().Add(-time.Minute))

	a := e.open(hosts[0])
	for range 3 { // fix, guard, commit
		e.attempt(a, true)
	}
	committed := take(t, a)
	var sha string
	for _, ev := range e.events {
		if ev.Type == runtime.EvNodeFinished && ev.Node == "commit" {
			sha = ev.Outputs["commit"].(string)
		}
	}
	if p := e.attempt(a, false); p.Outputs["pushed"] != true {
		t.Fatalf("host a's push: %v", p.Outputs)
	}
	_ = a.Abort() // host a is lost

	b := e.move(hosts[1], committed)
	if p := e.attempt(b, true); p.Outputs["pushed"] != false {
		t.Fatalf("host b's push of the same commit must find it there: %v", p.Outputs)
	}
	pushed := take(t, b)
	e.attempt(b, false)
	if n := len(gh.Pulls()); n != 1 {
		t.Fatalf("host b opened %d pull requests", n)
	}
	_ = b.Abort() // host b is lost

	c := e.move(hosts[2], pushed)
	e.attempt(c, true)

	if tip := nodetest.Run(t, remote, "git", "rev-parse", "fix/f"); tip != sha {
		t.Fatalf("remote fix/f at %s, want host a's commit %s", tip, sha)
	}
	if n, log := gitfixture.Updates(updates, "fix/f"); n != 1 {
		t.Fatalf("the remote's ref updates:\n%s\nwant one", log)
	}
	if p := gh.Pulls(); len(p) != 1 || p[0].Head != "fix/f" || p[0].Updates != 1 {
		t.Fatalf("pull requests %+v, want one from fix/f, found again once", p)
	}
}
