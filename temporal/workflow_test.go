package temporal

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/sandgate/sandgate/blueprint"
	"github.com/sandgate/sandgate/runtime"
	"github.com/sandgate/sandgate/temporal/internal/testnodes"
)

// loopBP is a work → gate loop whose gate's verdicts the test picks.
func loopBP(gate string) string {
	return `version: 1
name: loop
start: work
nodes:
  work: {type: step, next: gate}
  gate:
    type: step
    outcomes: ` + gate + `
    on_pass: done
    on_fail: {to: work, max: 2}
  done: {type: succeed}
`
}

type fixture struct {
	env  *testsuite.TestWorkflowEnvironment
	host *Host
	ws   string
}

// newFixture registers the workflow and a real Host (test node types, a
// temporary runs directory) in the SDK's in-memory test environment.
func newFixture(t *testing.T) *fixture {
	return newFixtureOn(t, &Host{Name: "h1", Queue: "sandgate@h1", Runtime: &runtime.Runtime{Registry: testnodes.Registry(), RunsDir: t.TempDir(), NoSync: true}})
}

// newFixtureOn registers the workflow, with h's registry, and h's
// activities in the SDK's in-memory test environment.
func newFixtureOn(t *testing.T, h *Host) *fixture {
	env := testEnv()
	env.RegisterWorkflowWithOptions((&Workflows{Registry: h.Runtime.Registry}).Run, workflow.RegisterOptions{Name: WorkflowName})
	env.RegisterActivityWithOptions(h.Open, activity.RegisterOptions{Name: ActivityOpen})
	env.RegisterActivityWithOptions(h.Node, activity.RegisterOptions{Name: ActivityNode})
	env.RegisterActivityWithOptions(h.Finish, activity.RegisterOptions{Name: ActivityFinish})
	return &fixture{env: env, host: h, ws: t.TempDir()}
}

func (f *fixture) run(t *testing.T, src string) Status {
	t.Helper()
	f.env.ExecuteWorkflow(WorkflowName, RunInput{File: "bp.yaml", Source: []byte(src), Repo: f.ws})
	if !f.env.IsWorkflowCompleted() {
		t.Fatal("workflow did not complete")
	}
	if err := f.env.GetWorkflowError(); err != nil {
		t.Fatalf("workflow error: %v", err)
	}
	var st Status
	if err := f.env.GetWorkflowResult(&st); err != nil {
		t.Fatal(err)
	}
	return st
}

// journal reads the run directory the host wrote.
func (f *fixture) journal(t *testing.T, st Status) []runtime.Event {
	t.Helper()
	events, err := runtime.ReadJournal(filepath.Join(st.Dir, "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	return events
}

// TestWorkflowRunsTheLoop: the retry loop runs to success and the host's
// journal is one the local scheduler replays decision for decision, with
// run.json written as a local run's.
func TestWorkflowRunsTheLoop(t *testing.T) {
	f := newFixture(t)
	st := f.run(t, loopBP("[fail, pass]"))
	if st.Status != runtime.StatusSucceeded || st.NodeRuns != 4 {
		t.Fatalf("status %+v", st)
	}
	events := f.journal(t, st)
	bp, _ := testnodes.Registry().Parse("bp.yaml", []byte(loopBP("[fail, pass]")))
	if err := runtime.Replay(bp, events); err != nil {
		t.Fatal(err)
	}
	sum, err := runtime.Summarize(st.Dir)
	if err != nil || sum.Status != runtime.StatusSucceeded || events[len(events)-1].Type != runtime.EvRunClosed {
		t.Fatalf("summary %+v, %v", sum, err)
	}
	if _, err := os.Stat(filepath.Join(st.Dir, "run.json")); err != nil {
		t.Fatal(err)
	}
	if f.host.Runs() != 0 {
		t.Fatalf("host still holds %d runs", f.host.Runs())
	}
}

// TestWorkflowHandoffAnswered: a run handed off waits; an answer signal
// continues it on the same record to success, exactly as runtime.Answer.
func TestWorkflowHandoffAnswered(t *testing.T) {
	f := newFixture(t)
	f.env.RegisterDelayedCallback(func() {
		v, err := f.env.QueryWorkflow(QueryStatus)
		var st Status
		if err == nil {
			err = v.Get(&st)
		}
		if err != nil || !st.Waiting || st.Status != runtime.StatusHandedOff {
			t.Errorf("before the answer: %+v %v", st, err)
		}
		f.env.SignalWorkflow(SignalAnswer, Answer{Node: "nope", Note: "x", By: "ann"})
		f.env.SignalWorkflow(SignalAnswer, Answer{Node: "gate", Note: "try again", By: "ann"})
	}, time.Hour)
	st := f.run(t, loopBP("[handoff, pass]"))
	if st.Status != runtime.StatusSucceeded || st.Answers != 1 {
		t.Fatalf("status %+v", st)
	}
	sum, err := runtime.Summarize(st.Dir)
	if err != nil || len(sum.Answers) != 1 || sum.Answers[0].By != "ann" || sum.Answers[0].Note != "try again" {
		t.Fatalf("summary %+v %v", sum, err)
	}
	if _, err := os.Stat(filepath.Join(st.Dir, "handoff.md")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("stale handoff.md after the answer: %v", err)
	}
}

// TestWorkflowHandoffWaitExpires: without an answer the run stays handed
// off once budget.handoff_wait (here the workflow option) passes.
func TestWorkflowHandoffWaitExpires(t *testing.T) {
	f := newFixture(t)
	f.env.ExecuteWorkflow(WorkflowName, RunInput{File: "bp.yaml", Source: []byte(loopBP("[handoff]")), Repo: f.ws, HandoffWait: 48 * time.Hour})
	var st Status
	if err := f.env.GetWorkflowResult(&st); err != nil {
		t.Fatal(err)
	}
	if st.Status != runtime.StatusHandedOff || !strings.Contains(st.Note, "no answer within 48h") {
		t.Fatalf("status %+v", st)
	}
	if _, err := os.Stat(filepath.Join(st.Dir, "handoff.md")); err != nil {
		t.Fatalf("no hand-off report: %v", err)
	}
}

// TestWorkflowHostLost: when the node activity cannot reach the run's host
// (schedule-to-start timeout), the run is handed off with the reason, not
// continued elsewhere.
func TestWorkflowHostLost(t *testing.T) {
	f := newFixture(t)
	lost := temporal.NewTimeoutError(enums.TIMEOUT_TYPE_SCHEDULE_TO_START, nil)
	f.env.OnActivity(ActivityNode, mock.Anything, mock.Anything).Return(nodeResult{}, lost)
	f.env.OnActivity(ActivityFinish, mock.Anything, mock.Anything).Return(finishResult{}, lost)
	f.env.ExecuteWorkflow(WorkflowName, RunInput{File: "bp.yaml", Source: []byte(loopBP("[pass]")), Repo: f.ws, HandoffWait: time.Hour})
	var st Status
	if err := f.env.GetWorkflowResult(&st); err != nil {
		t.Fatal(err)
	}
	if st.Status != runtime.StatusHandedOff || st.Kind != "workspace_lost" ||
		!strings.HasPrefix(st.Reason, "worker host h1 lost; the workspace was on it") || st.NodeRuns != 1 {
		t.Fatalf("status %+v", st)
	}
}

// TestWorkflowCancel: canceling the workflow cancels the run and still
// wraps its record up on the host.
func TestWorkflowCancel(t *testing.T) {
	f := newFixture(t)
	f.env.RegisterDelayedCallback(f.env.CancelWorkflow, time.Second)
	src := strings.Replace(loopBP("[pass]"), "work: {type: step, next: gate}", "work: {type: step, sleep: 1h, next: gate}", 1)
	st := f.run(t, src)
	if st.Status != runtime.StatusCanceled {
		t.Fatalf("status %+v", st)
	}
	sum, err := runtime.Summarize(st.Dir)
	if err != nil || sum.Status != runtime.StatusCanceled || !sum.Attempts[0].Canceled {
		t.Fatalf("summary %+v %v", sum, err)
	}
}

// TestWorkflowBudgetTimeout: budget.timeout is a workflow timer; a node
// still running when it fires is canceled and the run handed off.
func TestWorkflowBudgetTimeout(t *testing.T) {
	f := newFixture(t)
	f.env.OnActivity(ActivityNode, mock.Anything, mock.Anything).After(3*time.Hour).Return(nodeResult{}, nil)
	src := strings.Replace(loopBP("[pass]"), "start: work", "budget: {timeout: 1h}\nstart: work", 1)
	f.env.ExecuteWorkflow(WorkflowName, RunInput{File: "bp.yaml", Source: []byte(src), Repo: f.ws, HandoffWait: time.Minute})
	var st Status
	if err := f.env.GetWorkflowResult(&st); err != nil {
		t.Fatal(err)
	}
	if st.Status != runtime.StatusHandedOff || st.Kind != "timeout" || st.Reason != "budget exhausted: run timeout 1h0m0s" {
		t.Fatalf("status %+v", st)
	}
}

// TestWorkflowRetryBackoff: a node that breaks is retried after its
// backoff, waited as a workflow timer (so in workflow time, not on a
// worker).
func TestWorkflowRetryBackoff(t *testing.T) {
	f := newFixture(t)
	var starts []time.Time
	f.env.SetOnActivityStartedListener(func(info *activity.Info, _ context.Context, _ converter.EncodedValues) {
		if info.ActivityType.Name == ActivityNode {
			starts = append(starts, f.env.Now())
		}
	})
	src := strings.Replace(loopBP("[error, pass]"), "type: step\n    outcomes:", "type: step\n    retry: {max: 1, backoff: 10m}\n    outcomes:", 1)
	st := f.run(t, src)
	if st.Status != runtime.StatusSucceeded || len(starts) != 3 {
		t.Fatalf("status %+v, %d node activities", st, len(starts))
	}
	if gap := starts[2].Sub(starts[1]); gap < 10*time.Minute {
		t.Fatalf("the retry started %s after the broken attempt, backoff 10m", gap)
	}
}

// TestWorkflowHostRestarted: a worker restarted on the same host (its
// memory gone, its disk kept) picks the run up from the run directory:
// here every activity after open goes to a second Host over the same
// runs directory, which must reopen the run and carry it to the end.
func TestWorkflowHostRestarted(t *testing.T) {
	env := testEnv()
	reg, dir := testnodes.Registry(), t.TempDir()
	before := &Host{Name: "h1", Queue: "q@h1", Runtime: &runtime.Runtime{Registry: reg, RunsDir: dir}}
	after := &Host{Name: "h1", Queue: "q@h1", Runtime: &runtime.Runtime{Registry: reg, RunsDir: dir}}
	env.RegisterWorkflowWithOptions((&Workflows{Registry: reg}).Run, workflow.RegisterOptions{Name: WorkflowName})
	env.RegisterActivityWithOptions(before.Open, activity.RegisterOptions{Name: ActivityOpen})
	env.RegisterActivityWithOptions(after.Node, activity.RegisterOptions{Name: ActivityNode})
	env.RegisterActivityWithOptions(after.Finish, activity.RegisterOptions{Name: ActivityFinish})
	// The first worker goes away once it has opened the run, as a killed
	// worker process does: its hold on the run directory goes with it.
	env.SetOnActivityCompletedListener(func(info *activity.Info, _ converter.EncodedValue, _ error) {
		if info.ActivityType.Name == ActivityOpen {
			if err := before.Close(); err != nil {
				t.Error(err)
			}
		}
	})
	env.ExecuteWorkflow(WorkflowName, RunInput{File: "bp.yaml", Source: []byte(loopBP("[fail, pass]")), Repo: t.TempDir()})
	var st Status
	if err := env.GetWorkflowResult(&st); err != nil {
		t.Fatal(err)
	}
	if st.Status != runtime.StatusSucceeded || st.NodeRuns != 4 {
		t.Fatalf("status %+v", st)
	}
	events, err := runtime.ReadJournal(filepath.Join(st.Dir, "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	bp, _ := reg.Parse("bp.yaml", []byte(loopBP("[fail, pass]")))
	if err := runtime.Replay(bp, events); err != nil {
		t.Fatal(err)
	}
	if err := before.Close(); err != nil { // the first worker's process is gone
		t.Fatal(err)
	}
}

// testEnv is the SDK's in-memory environment, its logging silenced.
func testEnv() *testsuite.TestWorkflowEnvironment {
	var s testsuite.WorkflowTestSuite
	s.SetLogger(sdklog.NewStructuredLogger(slog.New(slog.DiscardHandler)))
	return s.NewTestWorkflowEnvironment()
}

// TestWorkflowPrepareFails: a workspace that cannot be made fails the run
// at once, with the cause, instead of retrying for an hour.
func TestWorkflowPrepareFails(t *testing.T) {
	f := newFixture(t)
	f.host.Prepare = func(repo, rev string) runtime.Prepare {
		return func(context.Context, string, *blueprint.Blueprint, bool) (*runtime.Environment, error) {
			return nil, errors.New("no commit deadbeef in " + repo)
		}
	}
	st := f.run(t, loopBP("[pass]"))
	if st.Status != runtime.StatusFailed || !strings.Contains(st.Reason, "no commit deadbeef in "+f.ws) || st.NodeRuns != 0 {
		t.Fatalf("status %+v", st)
	}
}

// TestWorkflowKeepsLabels: the starter's labels reach the run's record
// (meta.json, run.json: what the inbox shows and filters on) and the
// status; labels that break the rules fail the workflow before any host
// opens a workspace.
func TestWorkflowKeepsLabels(t *testing.T) {
	f := newFixture(t)
	f.env.ExecuteWorkflow(WorkflowName, RunInput{File: "bp.yaml", Source: []byte(loopBP("[pass]")), Repo: f.ws, Labels: runtime.Labels{"team": "infra", "ticket": "T-7"}})
	var st Status
	if err := f.env.GetWorkflowResult(&st); err != nil {
		t.Fatal(err)
	}
	if st.Labels["team"] != "infra" || st.Labels["ticket"] != "T-7" {
		t.Fatalf("status labels %v", st.Labels)
	}
	sum, err := runtime.Summarize(st.Dir)
	if err != nil || sum.Labels["team"] != "infra" || sum.Labels["ticket"] != "T-7" {
		t.Fatalf("record labels %v, %v", sum.Labels, err)
	}

	bad := newFixture(t)
	bad.env.ExecuteWorkflow(WorkflowName, RunInput{File: "bp.yaml", Source: []byte(loopBP("[pass]")), Repo: bad.ws, Labels: runtime.Labels{"team": "a\x1b[31mb"}})
	if err := bad.env.GetWorkflowError(); err == nil || !strings.Contains(err.Error(), "label team") {
		t.Fatalf("workflow error %v", err)
	}
	if entries, _ := os.ReadDir(bad.host.Runtime.RunsDir); len(entries) != 0 {
		t.Fatalf("a run with bad labels left %d run directories", len(entries))
	}
}
