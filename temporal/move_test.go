package temporal

import (
	"bytes"
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/sandgate/sandgate/internal/gitfixture"
	"github.com/sandgate/sandgate/nodes"
	"github.com/sandgate/sandgate/runtime"
	"github.com/sandgate/sandgate/sandbox"
	"github.com/sandgate/sandgate/temporal/internal/runfixture"
)

// TestMain lets the test binary serve the sandbox's re-executed helpers
// (the move tests run real boxes).
func TestMain(m *testing.M) {
	sandbox.Main()
	os.Exit(m.Run())
}

const moveBP = `version: 1
name: mv
start: edit
nodes:
  edit: {type: shell, run: "echo changed > hello.txt", next: late}
  late: {type: shell, run: "echo smuggled > evil.txt", next: done}
  done: {type: succeed}
`

// sandboxHost is a worker host with the built-in nodes in sandboxed
// workspaces, its activities registered under the host's name.
func sandboxHost(t *testing.T, env *testsuite.TestActivityEnvironment, name string) *Host {
	h := newSandboxHost(t, name, "q@"+name)
	env.RegisterActivityWithOptions(h.Open, activity.RegisterOptions{Name: name + ".open"})
	env.RegisterActivityWithOptions(h.Node, activity.RegisterOptions{Name: name + ".node"})
	return h
}

// newSandboxHost is a worker host with the built-in nodes in sandboxed
// workspaces, closed when the test ends.
func newSandboxHost(t *testing.T, name, queue string) *Host {
	h := &Host{Name: name, Queue: queue, Runtime: &runtime.Runtime{Registry: nodes.NewRegistry(), RunsDir: t.TempDir()}, Prepare: runfixture.Sandboxed}
	t.Cleanup(func() { _ = h.Close() })
	return h
}

func execute[T any](t *testing.T, env *testsuite.TestActivityEnvironment, name string, in any) (T, error) {
	t.Helper()
	var out T
	v, err := env.ExecuteActivity(name, in)
	if err == nil {
		err = v.Get(&out)
	}
	return out, err
}

// TestMoveRebuildsFromTheRecord is the attack on moving runs: the box on
// host a writes evil.txt after the last recorded change (its attempt's
// report never reaches the workflow: the host dies). Host b must rebuild
// the workspace from the base and the recorded change alone, with the
// recorded fingerprint, and refuse records that do not hold together.
func TestMoveRebuildsFromTheRecord(t *testing.T) {
	repo := t.TempDir()
	if err := gitfixture.Seed(repo, map[string]string{"hello.txt": "hello\n"}, "init"); err != nil {
		t.Fatal(err)
	}
	env := (&testsuite.WorkflowTestSuite{}).NewTestActivityEnvironment()
	sandboxHost(t, env, "a")
	b := sandboxHost(t, env, "b")
	run := RunInput{File: "bp.yaml", Source: []byte(moveBP), Repo: repo}
	if _, err := execute[openResult](t, env, "a.open", openInput{RunID: "mv", Run: run}); err != nil {
		t.Fatal(err)
	}
	events := []runtime.Event{{Seq: 1, Type: runtime.EvRunStarted, RunID: "mv", Blueprint: "mv"},
		{Seq: 2, Type: runtime.EvNodeStarted, Node: "edit", Attempt: 1}}
	edit, err := execute[nodeResult](t, env, "a.node", nodeInput{RunID: "mv", Repo: repo, Events: events, Node: "edit", Attempt: 1})
	if err != nil || edit.Change == nil || !bytes.Contains(edit.Change.Patch, []byte("+changed")) {
		t.Fatalf("edit: %+v %v", edit, err)
	}
	fin := edit.Event
	fin.Seq = 3
	events = append(events, fin, runtime.Event{Seq: 4, Type: runtime.EvNodeStarted, Node: "late", Attempt: 1})
	late, err := execute[nodeResult](t, env, "a.node", nodeInput{RunID: "mv", Repo: repo, Events: events[2:], Node: "late", Attempt: 1, Have: edit.Change.Fingerprint})
	if err != nil || late.Change == nil || !bytes.Contains(late.Change.Patch, []byte("evil.txt")) {
		t.Fatalf("the box's late write is not in host a's workspace: %+v %v", late, err)
	}
	rec := *edit.Change
	if _, err := execute[openResult](t, env, "b.open", openInput{RunID: "mv", Run: run, Move: &moveInput{From: "a", Events: events, Change: &rec}}); err != nil {
		t.Fatal(err)
	}
	got, err := b.runs["mv"].Change()
	if err != nil || fingerprint(got) != rec.Fingerprint || bytes.Contains(got, []byte("evil")) {
		t.Fatalf("rebuilt change %q (%v), want the recorded %s", got, err, rec.Fingerprint)
	}
	if n := b.runs["mv"].Journaled(); n != len(events) {
		t.Fatalf("host b journaled %d events, want %d", n, len(events))
	}
	smuggled := bytes.Replace(rec.Patch, []byte("+changed"), []byte("+smuggled"), 1)
	// A verdict no gate gave, and a record written outside the run's.
	forged := []byte(`{"verify.json":{"gates":{"test":{"pass":true,"fingerprint":"*"}}}}`)
	outside := []byte(`{"../../evil.json":{}}`)
	for _, tc := range []struct {
		name, want string
		change     Change
	}{
		{"patch altered", "does not match its fingerprint", Change{Patch: smuggled, Fingerprint: rec.Fingerprint}},
		{"fingerprint altered", "does not match its fingerprint", Change{Patch: rec.Patch, Fingerprint: fingerprint(smuggled)}},
		{"patch that does not apply", "apply the recorded change", Change{Patch: []byte("garbage"), Fingerprint: fingerprint([]byte("garbage"))}},
		{"records added", "does not match its fingerprint", Change{Patch: rec.Patch, Records: forged, Fingerprint: rec.Fingerprint}},
		{"records naming another file", "not a promotion record", Change{Patch: rec.Patch, Records: outside, Fingerprint: stateFingerprint(rec.Patch, outside)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := tc.change
			_, err := execute[openResult](t, env, "b.open", openInput{RunID: "mv-" + strings.ReplaceAll(tc.name, " ", "-"), Run: run,
				Move: &moveInput{From: "a", Events: events, Change: &c}})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want a refusal: %s", err, tc.want)
			}
		})
	}
}

// TestWorkflowHostLostMoves: a node activity lost with its host makes the
// workflow rebuild the run elsewhere (the open activity with Move, carrying
// the whole journal and the last recorded change) and run the lost attempt
// again under its number there; the run then finishes on the new host.
func TestWorkflowHostLostMoves(t *testing.T) {
	f := newFixture(t)
	lost := temporal.NewTimeoutError(enums.TIMEOUT_TYPE_HEARTBEAT, nil)
	calls := 0
	f.env.OnActivity(ActivityNode, mock.Anything, mock.Anything).Return(func(ctx context.Context, in nodeInput) (nodeResult, error) {
		calls++
		switch calls {
		case 2:
			return nodeResult{}, lost // gate#1 on h1: its worker went silent
		case 3:
			return nodeResult{}, temporal.NewTimeoutError(enums.TIMEOUT_TYPE_SCHEDULE_TO_START, nil) // the retry: no worker on h1's queue
		}
		res, err := f.host.Node(ctx, in)
		res.Change, res.NoChange = &Change{Patch: []byte("p"), Fingerprint: fingerprint([]byte("p"))}, ""
		return res, err
	})
	var move *moveInput
	f.env.OnActivity(ActivityOpen, mock.Anything, mock.Anything).Return(func(ctx context.Context, in openInput) (openResult, error) {
		if in.Move != nil {
			move = in.Move
			in.Move = nil // the fixture's host has no rebuildable workspace: keep its run
			res, err := f.host.Open(ctx, in)
			if err == nil {
				_, err = f.host.runs[in.RunID].Record(move.Events)
			}
			res.Host = "h2"
			return res, err
		}
		return f.host.Open(ctx, in)
	})
	st := f.run(t, loopBP("[pass]"))
	if st.Status != runtime.StatusSucceeded || st.Host != "h2" || st.NodeRuns != 2 {
		t.Fatalf("status %+v", st)
	}
	if move == nil || move.From != "h1" || move.Change == nil || string(move.Change.Patch) != "p" || len(move.Events) == 0 {
		t.Fatalf("move %+v", move)
	}
	started := 0
	for _, ev := range f.journal(t, st) {
		if ev.Type == runtime.EvNodeStarted && ev.Node == "gate" {
			started++
		}
	}
	if started != 1 {
		t.Fatalf("gate started %d times in the journal; the lost attempt re-runs under its number", started)
	}
}

// TestWorkflowMoveGivesWay: a move waits for a host up to an hour; the
// run's budget.timeout and a cancel must not wait behind it. The lost
// attempt's move never finds a host here (its open activity takes three
// hours); the run ends by its timeout, or by the cancel, within the wait.
func TestWorkflowMoveGivesWay(t *testing.T) {
	for _, tc := range []struct {
		name       string
		cancelAt   time.Duration
		want       runtime.Status
		kind, text string
	}{
		{"timeout", 0, runtime.StatusHandedOff, "timeout", "run timeout 1h0m0s (while the run waited to move to another host)"},
		{"cancel", 20 * time.Minute, runtime.StatusCanceled, "canceled", "while the run waited to move"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			f.env.OnActivity(ActivityNode, mock.Anything, mock.Anything).Return(nodeResult{}, temporal.NewTimeoutError(enums.TIMEOUT_TYPE_HEARTBEAT, nil))
			moved := false
			f.env.OnActivity(ActivityOpen, mock.Anything, mock.MatchedBy(func(in openInput) bool { return in.Move == nil })).Return(f.host.Open)
			// No host takes the move for three hours.
			f.env.OnActivity(ActivityOpen, mock.Anything, mock.MatchedBy(func(in openInput) bool { moved = moved || in.Move != nil; return in.Move != nil })).
				After(3*time.Hour).Return(openResult{}, errors.New("no host took the move"))
			if tc.cancelAt > 0 {
				f.env.RegisterDelayedCallback(f.env.CancelWorkflow, tc.cancelAt)
			}
			src := strings.Replace(loopBP("[pass]"), "start: work", "budget: {timeout: 1h}\nstart: work", 1)
			f.env.ExecuteWorkflow(WorkflowName, RunInput{File: "bp.yaml", Source: []byte(src), Repo: f.ws, HandoffWait: time.Minute})
			var st Status
			if err := f.env.GetWorkflowResult(&st); err != nil && tc.want != runtime.StatusCanceled {
				t.Fatal(err)
			}
			if !moved {
				t.Fatal("the run never tried to move")
			}
			if st.Status != tc.want || st.Kind != tc.kind || !strings.Contains(st.Reason, tc.text) {
				t.Fatalf("status %+v, want %s (%s: %s)", st, tc.want, tc.kind, tc.text)
			}
		})
	}
}
