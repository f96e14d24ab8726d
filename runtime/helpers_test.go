package runtime_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sandgate/sandgate/blueprint"
	"github.com/sandgate/sandgate/runtime"
)

// scriptNode is a test node whose verdicts follow a list, one per attempt
// (the last repeats). It records every execution in the workspace so tests
// can count how often a node really ran.
type scriptNode struct {
	spec *blueprint.Node
}

func (n *scriptNode) Run(ctx context.Context, in *runtime.Input) (*runtime.Result, error) {
	cfg := n.spec.Config
	mark(in.Workspace, in.NodeID)
	once, _ := cfg["sleep_once"].(bool)
	if d, ok := cfg["sleep"].(time.Duration); ok && os.Getenv("SANDGATE_NO_SLEEP") == "" && (!once || in.Attempt == 1) {
		select {
		case <-time.After(d):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	verdicts, _ := cfg["outcomes"].([]string)
	v := "pass"
	if len(verdicts) > 0 {
		v = verdicts[min(in.Attempt, len(verdicts))-1]
	}
	tokens, _ := cfg["tokens"].(int)
	cost, _ := cfg["cost"].(float64)
	prompt, err := in.Render("prompt")
	if err != nil {
		return nil, err
	}
	res := &runtime.Result{Tokens: tokens, Cost: cost, Outputs: map[string]any{"seen_feedback": in.Feedback, "attempt": in.Attempt, "prompt": prompt}}
	if cost > 0 {
		// What the run had spent, and its budget, when this attempt began.
		res.Outputs["run_cost"], res.Outputs["cost_budget"] = in.Scope.Run.Cost, in.Budget.Cost
	}
	switch v {
	case "error":
		return nil, fmt.Errorf("scripted error on attempt %d", in.Attempt)
	case "panic":
		panic("scripted panic")
	case "fail":
		res.Outcome, res.Feedback = runtime.OutcomeFail, fmt.Sprintf("%s failed on attempt %d", in.NodeID, in.Attempt)
	case "handoff":
		res.Outcome, res.Reason = runtime.OutcomeHandoff, "scripted hand-off"
	default:
		res.Outcome = runtime.OutcomePass
	}
	return res, nil
}

var markMu sync.Mutex

// mark appends the node id to workspace/runs.log.
func mark(ws, id string) {
	markMu.Lock()
	defer markMu.Unlock()
	f, err := os.OpenFile(filepath.Join(ws, "runs.log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err == nil {
		fmt.Fprintln(f, id)
		f.Close()
	}
}

// executions counts how often each node ran in a workspace.
func executions(t *testing.T, ws string) map[string]int {
	t.Helper()
	b, _ := os.ReadFile(filepath.Join(ws, "runs.log"))
	out := map[string]int{}
	for _, l := range strings.Fields(string(b)) {
		out[l]++
	}
	return out
}

func scriptType(name string) runtime.Type {
	return runtime.Type{
		Spec: blueprint.NodeType{Name: name, Fields: map[string]blueprint.Field{
			"outcomes":   {Kind: blueprint.KindStringList},
			"sleep":      {Kind: blueprint.KindDuration},
			"sleep_once": {Kind: blueprint.KindBool},
			"tokens":     {Kind: blueprint.KindInt},
			"cost":       {Kind: blueprint.KindFloat},
			"prompt":     {Kind: blueprint.KindString},
		}, Outputs: map[string]blueprint.Kind{"seen_feedback": blueprint.KindString, "attempt": blueprint.KindInt, "prompt": blueprint.KindString}},
		New: func(spec *blueprint.Node) (runtime.Node, error) { return &scriptNode{spec: spec}, nil },
	}
}

func testRegistry(t testing.TB) *runtime.Registry {
	// t is nil in the crash child, where a failure simply panics.
	r := runtime.NewRegistry()
	for _, n := range []string{"script", "agent", "gate"} {
		if err := r.Register(scriptType(n)); err != nil {
			panic(err)
		}
	}
	return r
}

type fixture struct {
	rt  *runtime.Runtime
	bp  *blueprint.Blueprint
	ws  string
	obs *recorder
}

type recorder struct {
	mu     sync.Mutex
	events []runtime.Event
}

func (r *recorder) Event(ev runtime.Event) {
	r.mu.Lock()
	r.events = append(r.events, ev)
	r.mu.Unlock()
}

func newFixture(t testing.TB, src string) *fixture {
	t.Helper()
	reg := testRegistry(t)
	bp, err := blueprint.Parse("test.yaml", []byte(src), blueprint.WithTypes(reg))
	if err != nil {
		t.Fatalf("blueprint: %v", err)
	}
	obs := &recorder{}
	rt := &runtime.Runtime{Registry: reg, RunsDir: t.TempDir(), Observer: obs, CancelPoll: 10 * time.Millisecond}
	return &fixture{rt: rt, bp: bp, ws: t.TempDir(), obs: obs}
}

func (f *fixture) run(t testing.TB, ctx context.Context, inputs map[string]any) *runtime.Summary {
	t.Helper()
	sum, err := f.rt.Run(ctx, f.bp, runtime.RunOptions{Inputs: inputs, Workspace: f.ws})
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	return sum
}

// retryLoop is the lint → agent shape every test varies.
func retryLoop(lintOutcomes string, extra string) string {
	return `version: 1
name: loop
inputs:
  task: {required: true}
` + extra + `
start: implement
nodes:
  implement:
    type: agent
    prompt: "fix ${{ inputs.task }}: ${{ feedback }}"
    next: lint
  lint:
    type: gate
    outcomes: ` + lintOutcomes + `
    on_pass: done
    on_fail: {to: implement, max: 2}
  done: {type: succeed}
`
}
