package runtimetest_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/sandgate/sandgate/blueprint"
	"github.com/sandgate/sandgate/runtime"
	"github.com/sandgate/sandgate/runtime/runtimetest"
)

// actType is a node that does what its `do` says: pass, fail, handoff,
// error, panic, hang (until its context ends), or error_once (an error on
// the first attempt, then a pass).
func actType() runtime.Type {
	return runtime.Type{
		Spec: blueprint.NodeType{Name: "act", Doc: "does what it is told", Fields: map[string]blueprint.Field{"do": {Kind: blueprint.KindString}}},
		New: func(spec *blueprint.Node) (runtime.Node, error) {
			do, _ := spec.Config["do"].(string)
			return &fake{run: func(ctx context.Context, in *runtime.Input) (*runtime.Result, error) {
				switch {
				case do == "fail":
					return &runtime.Result{Outcome: runtime.OutcomeFail, Feedback: "the attack was caught"}, nil
				case do == "handoff":
					return &runtime.Result{Outcome: runtime.OutcomeHandoff, Reason: "refused"}, nil
				case do == "error", do == "error_once" && in.Attempt == 1:
					return nil, errors.New("the judge box: start it: no such file")
				case do == "panic":
					panic("index out of range")
				case do == "hang":
					<-ctx.Done()
					return nil, ctx.Err()
				}
				return &runtime.Result{Outcome: runtime.OutcomePass}, nil
			}}, nil
		},
	}
}

// verdictRun runs a blueprint of act nodes to its end.
func verdictRun(t *testing.T, src string) *runtime.Summary {
	t.Helper()
	reg := runtime.NewRegistry()
	if err := reg.Register(actType()); err != nil {
		t.Fatal(err)
	}
	bp, err := reg.Parse("v.yaml", []byte(src))
	if err != nil {
		t.Fatalf("blueprint: %v", err)
	}
	rt := &runtime.Runtime{Registry: reg, RunsDir: t.TempDir()}
	sum, err := rt.Run(context.Background(), bp, runtime.RunOptions{Workspace: t.TempDir()})
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	return sum
}

// TestEndedByVerdict runs real runs that end by a verdict and runs that
// end by a broken harness; only the first may pass the check. Each broken
// run is one an attack test that asks only "did the run not succeed"
// would have taken for a caught attack.
func TestEndedByVerdict(t *testing.T) {
	head := "version: 1\nname: v\nstart: gate\n"
	cases := []struct {
		name, src, want string // want "" for a verdict
	}{
		{"a failed gate routed to a fail node", head + "nodes:\n  gate: {type: act, do: fail, on_pass: ok, on_fail: no}\n  ok: {type: succeed}\n  no: {type: fail}\n", ""},
		{"a failed gate taken by next to a hand-off", head + "nodes:\n  gate: {type: act, do: fail, next: stuck}\n  stuck: {type: handoff}\n", ""},
		{"a node asks for a person", head + "nodes:\n  gate: {type: act, do: handoff, next: ok}\n  ok: {type: succeed}\n", ""},
		{"a retry edge's bound", head + "nodes:\n  gate: {type: act, do: fail, on_pass: ok, on_fail: {to: gate, max: 1}}\n  ok: {type: succeed}\n", ""},
		{"a pass", head + "nodes:\n  gate: {type: act, do: pass, next: ok}\n  ok: {type: succeed}\n", ""},
		{"a sibling canceled by the run's end", "version: 1\nname: v\nstart: fan\nnodes:\n  fan: {type: act, do: pass, next: [gate, slow]}\n  gate: {type: act, do: fail, next: no}\n  slow: {type: act, do: hang, next: no}\n  no: {type: fail}\n", ""},
		{"a node error", head + "nodes:\n  gate: {type: act, do: error, on_pass: ok, on_fail: no}\n  ok: {type: succeed}\n  no: {type: fail}\n",
			"node gate (attempt 1) broke: the judge box: start it: no such file"},
		{"a panic", head + "nodes:\n  gate: {type: act, do: panic, on_pass: ok, on_fail: no}\n  ok: {type: succeed}\n  no: {type: fail}\n",
			"node gate (attempt 1) broke: node panicked: index out of range"},
		{"an error a retry recovered", head + "nodes:\n  gate: {type: act, do: error_once, retry: {max: 1}, on_pass: ok, on_fail: no}\n  ok: {type: succeed}\n  no: {type: fail}\n",
			"node gate (attempt 1) broke"},
		{"a node's timeout", head + "nodes:\n  gate: {type: act, do: hang, timeout: 50ms, on_pass: ok, on_fail: no}\n  ok: {type: succeed}\n  no: {type: fail}\n",
			"node gate (attempt 1) was stopped by its timeout: node gate timed out after 50ms"},
		{"the run's time budget", "version: 1\nname: v\nbudget: {timeout: 50ms}\nstart: gate\nnodes:\n  gate: {type: act, do: hang, on_pass: ok, on_fail: no}\n  ok: {type: succeed}\n  no: {type: fail}\n",
			"the run ended by no node's verdict (handed_off, timeout)"},
		{"the node-runs budget", "version: 1\nname: v\nbudget: {max_node_runs: 1}\nstart: a\nnodes:\n  a: {type: act, do: pass, next: gate}\n  gate: {type: act, do: fail, next: no}\n  no: {type: fail}\n",
			"the run ended by no node's verdict (handed_off, node_runs)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sum := verdictRun(t, c.src)
			if strings.Contains(c.name, "canceled") && !sum.Attempts[len(sum.Attempts)-1].Canceled {
				t.Fatalf("the sibling was not canceled: %+v", sum.Attempts)
			}
			err := runtimetest.EndedByVerdict(sum)
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("a run that ended by a verdict was refused: %v (%s: %s)", err, sum.Kind, sum.Reason)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Fatalf("want an error holding %q, got %v (run %s, %s: %s)", c.want, err, sum.Status, sum.Kind, sum.Reason)
			}
		})
	}
}

// TestEndedByVerdictUnfinished: a summary of a run still going is no
// verdict.
func TestEndedByVerdictUnfinished(t *testing.T) {
	err := runtimetest.EndedByVerdict(&runtime.Summary{Status: runtime.StatusRunning})
	if err == nil || !strings.Contains(err.Error(), "not finished") {
		t.Fatalf("got %v", err)
	}
}

// TestDecided: an attempt decided when it ended by its node's outcome.
func TestDecided(t *testing.T) {
	cases := []struct {
		a    runtime.AttemptInfo
		want string
	}{
		{runtime.AttemptInfo{Node: "g", Attempt: 1, Outcome: runtime.OutcomeFail, Feedback: "lint: 3 problems"}, ""},
		{runtime.AttemptInfo{Node: "g", Attempt: 1, Outcome: runtime.OutcomeHandoff}, ""},
		{runtime.AttemptInfo{Node: "g", Attempt: 2, Error: "node panicked: boom\ngoroutine 7 [running]:\nmain.f()\n\tf.go:1\nmore"}, "node g (attempt 2) broke: node panicked: boom\ngoroutine 7 [running]:\nmain.f()\n…"},
		{runtime.AttemptInfo{Node: "g", Attempt: 1, Outcome: runtime.OutcomeFail, TimedOut: true, Feedback: "node g timed out after 10m0s"}, "stopped by its timeout"},
		// The node's own words, however they read, are its verdict: only
		// the runtime's record says it stopped the attempt.
		{runtime.AttemptInfo{Node: "g", Attempt: 1, Outcome: runtime.OutcomeFail, Feedback: "node g timed out after 10m0s"}, ""},
		{runtime.AttemptInfo{Node: "g", Attempt: 1, Canceled: true}, "canceled before it decided"},
		{runtime.AttemptInfo{Node: "g", Attempt: 1}, "has not finished"},
	}
	for _, c := range cases {
		err := runtimetest.Decided(c.a)
		if (c.want == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), c.want) {
			t.Errorf("Decided(%+v) = %v, want %q", c.a, err, c.want)
		}
	}
}
