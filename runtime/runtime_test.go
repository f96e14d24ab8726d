package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sandgate/sandgate/blueprint"
	"github.com/sandgate/sandgate/internal/wait"
	"github.com/sandgate/sandgate/runtime"
)

func TestRetryLoopTerminalStates(t *testing.T) {
	cases := []struct {
		name, lint string
		want       runtime.Status
		kind       string
		lintRuns   int
	}{
		{"passes first time", "[pass]", runtime.StatusSucceeded, "succeed", 1},
		{"passes on the last retry", "[fail, fail, pass]", runtime.StatusSucceeded, "succeed", 3},
		{"bound exhausted hands off", "[fail]", runtime.StatusHandedOff, "edge", 3},
		{"agent asks for a person", "[handoff]", runtime.StatusHandedOff, "node", 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t, retryLoop(c.lint, ""))
			sum := f.run(t, context.Background(), map[string]any{"task": "x"})
			if sum.Status != c.want || sum.Kind != c.kind {
				t.Fatalf("status %s/%s (%s), want %s/%s", sum.Status, sum.Kind, sum.Reason, c.want, c.kind)
			}
			if got := executions(t, f.ws)["lint"]; got != c.lintRuns {
				t.Fatalf("lint ran %d times, want %d", got, c.lintRuns)
			}
			events, _ := runtime.ReadJournal(filepath.Join(sum.Dir, "events.jsonl"))
			if err := runtime.Replay(f.bp, events); err != nil {
				t.Fatalf("replay: %v", err)
			}
		})
	}
}

func TestFailTerminal(t *testing.T) {
	f := newFixture(t, `version: 1
name: t
start: a
nodes:
  a: {type: gate, outcomes: [fail], on_pass: ok, on_fail: bad}
  ok: {type: succeed}
  bad: {type: fail, reason: gate said no}
`)
	sum := f.run(t, context.Background(), nil)
	if sum.Status != runtime.StatusFailed || !strings.Contains(sum.Reason, "gate said no") {
		t.Fatalf("got %s: %s", sum.Status, sum.Reason)
	}
	// The summary read back from the journal: every event has a time, so
	// the run's duration covers the wrap-up and is never negative.
	read, err := runtime.Summarize(sum.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if read.DurationMS < 0 || read.DurationMS < read.FinishMS {
		t.Fatalf("duration %d ms, wrap-up %d ms", read.DurationMS, read.FinishMS)
	}
	events, _ := runtime.ReadJournal(filepath.Join(sum.Dir, "events.jsonl"))
	for _, ev := range events {
		if ev.Time.IsZero() {
			t.Errorf("event %s has no time", ev.Type)
		}
	}
}

func TestFeedbackReachesRetriedNode(t *testing.T) {
	f := newFixture(t, retryLoop("[fail, pass]", ""))
	sum := f.run(t, context.Background(), map[string]any{"task": "x"})
	if sum.Status != runtime.StatusSucceeded {
		t.Fatalf("status %s: %s", sum.Status, sum.Reason)
	}
	var second *runtime.Event
	for i, ev := range f.obs.events {
		if ev.Type == runtime.EvNodeFinished && ev.Node == "implement" && ev.Attempt == 2 {
			second = &f.obs.events[i]
		}
	}
	if second == nil || second.Outputs["seen_feedback"] != "lint failed on attempt 1" ||
		second.Outputs["prompt"] != "fix x: lint failed on attempt 1" {
		t.Fatalf("agent attempt 2 did not see lint's feedback: %+v", second)
	}
}

// TestHandoffDiscard: a handed-off run keeps its workspace state only while
// an answer can still continue it; other finished runs discard it.
func TestHandoffDiscard(t *testing.T) {
	cases := []struct {
		name, lint, budget string
		want               runtime.Status
		discard            bool
	}{
		{"handed off, answerable", "[fail]", "", runtime.StatusHandedOff, false},
		{"handed off, answers 0", "[fail]", "budget: {answers: 0}", runtime.StatusHandedOff, true},
		{"succeeded", "[pass]", "", runtime.StatusSucceeded, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t, retryLoop(c.lint, c.budget))
			discarded := false
			f.rt.Prepare = func(context.Context, string, *blueprint.Blueprint, bool) (*runtime.Environment, error) {
				return &runtime.Environment{Workspace: f.ws, Discard: func() error { discarded = true; return nil }}, nil
			}
			sum := f.run(t, context.Background(), map[string]any{"task": "x"})
			if sum.Status != c.want || discarded != c.discard {
				t.Fatalf("status %s, discarded %v; want %s, %v", sum.Status, discarded, c.want, c.discard)
			}
		})
	}
}

func TestBudgets(t *testing.T) {
	cases := []struct {
		name, budget, lint string
		kind               string
	}{
		{"node runs", "budget: {max_node_runs: 3}", "[fail]", "node_runs"},
		{"tokens", "budget: {tokens: 150}", "[fail]", "tokens"},
		{"cost", "budget: {cost: 0.25}", "[fail]", "cost"},
		{"timeout", "budget: {timeout: 150ms}", "[fail]", "timeout"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src := retryLoop(c.lint, c.budget)
			src = strings.Replace(src, "    next: lint", "    tokens: 100\n    next: lint", 1)
			if c.kind == "cost" {
				src = strings.Replace(src, "    tokens: 100\n", "    cost: 0.1\n", 1)
			}
			if c.kind == "timeout" {
				src = strings.Replace(src, "    tokens: 100\n", "    sleep: 1h\n", 1)
			}
			f := newFixture(t, src)
			sum := f.run(t, context.Background(), map[string]any{"task": "x"})
			if sum.Status != runtime.StatusHandedOff || sum.Kind != c.kind {
				t.Fatalf("got %s/%s (%s)", sum.Status, sum.Kind, sum.Reason)
			}
			// The timeout stopped the hour-long attempt (it did not run
			// out): the attempt was canceled. Were it not stopped, the
			// run would not end before go test's -timeout.
			if last := sum.Attempts[len(sum.Attempts)-1]; c.kind == "timeout" && !last.Canceled {
				t.Fatalf("the timeout did not cancel the running attempt: %+v", last)
			}
		})
	}
}

func TestNodeErrorsRetryThenFail(t *testing.T) {
	src := `version: 1
name: t
start: a
nodes:
  a:
    type: script
    outcomes: [error, panic, pass]
    retry: {max: RETRIES, backoff: 1ms}
    next: done
  done: {type: succeed}
`
	for retries, want := range map[string]runtime.Status{"2": runtime.StatusSucceeded, "1": runtime.StatusFailed} {
		f := newFixture(t, strings.Replace(src, "RETRIES", retries, 1))
		sum := f.run(t, context.Background(), nil)
		if sum.Status != want {
			t.Errorf("retry max %s: got %s (%s), want %s", retries, sum.Status, sum.Reason, want)
		}
	}
}

func TestMissingInputRejectedBeforeRunning(t *testing.T) {
	f := newFixture(t, retryLoop("[pass]", ""))
	_, err := f.rt.Run(context.Background(), f.bp, runtime.RunOptions{Workspace: f.ws, Inputs: map[string]any{"tsak": "x"}})
	if err == nil || !strings.Contains(err.Error(), `missing required input "task"`) || !strings.Contains(err.Error(), `unknown input "tsak"`) {
		t.Fatalf("got %v", err)
	}
	if len(executions(t, f.ws)) != 0 {
		t.Fatal("a node ran despite bad inputs")
	}
}

func TestCancelByContextAndFromOutside(t *testing.T) {
	src := retryLoop("[pass]", "")
	src = strings.Replace(src, "    next: lint", "    sleep: 1h\n    next: lint", 1)
	for _, how := range []string{"context", "file"} {
		t.Run(how, func(t *testing.T) {
			f := newFixture(t, src)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			go func() {
				dir := waitForRunning(t, f)
				if how == "context" {
					cancel()
				} else if err := runtime.RequestCancel(dir, "operator pressed stop"); err != nil {
					t.Error(err)
				}
			}()
			// The attempt sleeps an hour: the run ends only if the cancel
			// stops it, which the attempt's record shows.
			sum := f.run(t, ctx, map[string]any{"task": "x"})
			if sum.Status != runtime.StatusCanceled {
				t.Fatalf("got %s: %s", sum.Status, sum.Reason)
			}
			if how == "file" && !strings.Contains(sum.Reason, "operator pressed stop") {
				t.Fatalf("reason %q", sum.Reason)
			}
			if !sum.Attempts[0].Canceled {
				t.Fatalf("running attempt not marked canceled: %+v", sum.Attempts)
			}
		})
	}
}

// waitForRunning waits until the first node has started and returns the run
// directory.
func waitForRunning(t *testing.T, f *fixture) string {
	var dir string
	if !wait.For(t, func() bool {
		f.obs.mu.Lock()
		n := len(f.obs.events)
		f.obs.mu.Unlock()
		if entries, _ := os.ReadDir(f.rt.RunsDir); n >= 2 && len(entries) == 1 {
			dir = filepath.Join(f.rt.RunsDir, entries[0].Name())
		}
		return dir != ""
	}) {
		t.Error("run never started") // from a goroutine: no Fatal
	}
	return dir
}

// TestEnvironmentFailureRunsNothing: when the environment (the sandbox)
// cannot be prepared, the run fails closed: no node runs, nothing is left.
func TestEnvironmentFailureRunsNothing(t *testing.T) {
	f := newFixture(t, retryLoop("[pass]", ""))
	f.rt.Prepare = func(context.Context, string, *blueprint.Blueprint, bool) (*runtime.Environment, error) {
		return nil, errors.New("landlock unavailable")
	}
	_, err := f.rt.Run(context.Background(), f.bp, runtime.RunOptions{Workspace: f.ws, Inputs: map[string]any{"task": "x"}})
	if err == nil || !strings.Contains(err.Error(), "landlock unavailable") {
		t.Fatalf("want the environment error, got %v", err)
	}
	if n := len(executions(t, f.ws)); n != 0 {
		t.Fatalf("%d nodes ran without an environment", n)
	}
	if entries, _ := os.ReadDir(f.rt.RunsDir); len(entries) != 0 {
		t.Fatalf("a half-made run was left behind: %v", entries)
	}
}

// The run's cost adds up every attempt's, reaches run.json, and each
// attempt sees what was spent before it and the budget.
func TestCostAccounting(t *testing.T) {
	src := strings.Replace(retryLoop("[fail, fail, pass]", "budget: {cost: 1.5}"), "    next: lint", "    cost: 0.25\n    next: lint", 1)
	f := newFixture(t, src)
	sum := f.run(t, context.Background(), map[string]any{"task": "x"})
	if sum.Status != runtime.StatusSucceeded || math.Abs(sum.Cost-0.75) > 1e-9 {
		t.Fatalf("status %s cost %v, want succeeded at 0.75 (%s)", sum.Status, sum.Cost, sum.Reason)
	}
	var seen []float64
	for _, a := range sum.Attempts {
		if a.Node == "implement" {
			seen = append(seen, a.Outputs["run_cost"].(float64))
			if a.Cost != 0.25 || a.Outputs["cost_budget"] != 1.5 {
				t.Errorf("attempt %d: cost %v budget %v", a.Attempt, a.Cost, a.Outputs["cost_budget"])
			}
		}
	}
	if fmt.Sprint(seen) != "[0 0.25 0.5]" {
		t.Errorf("attempts saw run costs %v, want [0 0.25 0.5]", seen)
	}
	b, err := os.ReadFile(filepath.Join(f.rt.RunsDir, filepath.Base(sum.Dir), "run.json"))
	if err != nil || !strings.Contains(string(b), `"cost": 0.75`) {
		t.Errorf("run.json lacks the cost: %v\n%s", err, b)
	}
}
