package runtime_test

import (
	"context"
	"fmt"
	"math/rand"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sandgate/sandgate/runtime"
)

func TestFanOutFanIn(t *testing.T) {
	f := newFixture(t, `version: 1
name: par
start: implement
nodes:
  implement: {type: agent, next: [lint, test]}
  lint: {type: gate, next: join}
  test: {type: gate, next: join}
  join: {type: script, needs: [lint, test], next: done}
  done: {type: succeed}
`)
	sum := f.run(t, context.Background(), nil)
	if sum.Status != runtime.StatusSucceeded {
		t.Fatalf("got %s: %s", sum.Status, sum.Reason)
	}
	got := executions(t, f.ws)
	if got["lint"] != 1 || got["test"] != 1 || got["join"] != 1 {
		t.Fatalf("executions %v", got)
	}
}

// TestRetryFromParallelSection: a bounded edge taken inside a parallel
// section cancels the running siblings, then takes the edge.
func TestRetryFromParallelSection(t *testing.T) {
	f := newFixture(t, `version: 1
name: par
start: implement
budget: {timeout: 1m}
nodes:
  implement: {type: agent, next: [lint, test]}
  lint:
    type: gate
    outcomes: [fail, pass]
    on_pass: join
    on_fail: {to: implement, max: 1}
  test: {type: gate, outcomes: [pass], sleep: 10s, sleep_once: true, next: join}
  join: {type: script, needs: [lint, test], next: done}
  done: {type: succeed}
`)
	sum := f.run(t, context.Background(), nil)
	if sum.Status != runtime.StatusSucceeded {
		t.Fatalf("got %s: %s", sum.Status, sum.Reason)
	}
	var canceled []string
	for _, a := range sum.Attempts {
		if a.Canceled {
			canceled = append(canceled, fmt.Sprintf("%s#%d", a.Node, a.Attempt))
		}
	}
	if strings.Join(canceled, ",") != "test#1" {
		t.Fatalf("want test#1 canceled by lint's retry, got %v (attempts %+v)", canceled, sum.Attempts)
	}
	if got := executions(t, f.ws); got["implement"] != 2 || got["join"] != 1 {
		t.Fatalf("executions %v", got)
	}
}

// TestReplayReproducesDecisions is the determinism property: for many random
// scripts, replaying a finished journal through a fresh scheduler yields the
// very decisions the live run made.
func TestReplayReproducesDecisions(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	verdicts := []string{"pass", "fail", "error"}
	pick := func(n int) string {
		out := make([]string, n)
		for i := range out {
			out[i] = verdicts[rng.Intn(len(verdicts))]
		}
		return "[" + strings.Join(out, ", ") + "]"
	}
	for i := 0; i < 40; i++ {
		src := fmt.Sprintf(`version: 1
name: prop
budget: {max_node_runs: 30}
start: implement
nodes:
  implement: {type: agent, outcomes: %s, retry: {max: 1}, next: [lint, test]}
  lint: {type: gate, outcomes: %s, on_pass: join, on_fail: {to: implement, max: 2}}
  test:
    type: gate
    outcomes: %s
    edges:
      - {to: join, when: "outcome == 'pass'"}
      - {to: implement, when: "attempts.test < 3", max: 2}
      - {to: stuck}
  join: {type: script, needs: [lint, test], next: done}
  done: {type: succeed}
  stuck: {type: handoff, reason: tests keep failing}
`, pick(4), pick(4), pick(4))
		f := newFixture(t, src)
		f.rt.NoSync = true
		sum := f.run(t, context.Background(), nil)
		events, err := runtime.ReadJournal(filepath.Join(sum.Dir, "events.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		if err := runtime.Replay(f.bp, events); err != nil {
			t.Fatalf("script %d (%s): %v\n%s", i, sum.Status, err, src)
		}
		if sum.Status == runtime.StatusRunning {
			t.Fatalf("script %d did not finish", i)
		}
	}
}
