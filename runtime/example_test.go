package runtime_test

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/sandgate/sandgate/blueprint"
	"github.com/sandgate/sandgate/runtime"
)

// flaky passes on its second attempt.
type flaky struct{}

func (flaky) Run(_ context.Context, in *runtime.Input) (*runtime.Result, error) {
	if in.Attempt < 2 {
		return &runtime.Result{Outcome: runtime.OutcomeFail, Feedback: "not yet"}, nil
	}
	return &runtime.Result{Outcome: runtime.OutcomePass}, nil
}

func ExampleRuntime_Run() {
	reg := runtime.NewRegistry()
	_ = reg.Register(runtime.Type{
		Spec: blueprint.NodeType{Name: "flaky", Doc: "passes the second time"},
		New:  func(*blueprint.Node) (runtime.Node, error) { return flaky{}, nil },
	})
	bp, err := blueprint.Parse("example.yaml", []byte(`version: 1
name: example
start: check
nodes:
  check: {type: flaky, on_pass: done, on_fail: {to: check, max: 2}}
  done: {type: succeed}
`), blueprint.WithTypes(reg))
	if err != nil {
		fmt.Println(err)
		return
	}
	dir, _ := os.MkdirTemp("", "runs-")
	defer os.RemoveAll(dir)
	rt := &runtime.Runtime{Registry: reg, RunsDir: dir}
	sum, err := rt.Run(context.Background(), bp, runtime.RunOptions{RunID: "example"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(sum.Status, sum.NodeRuns)
	// Output: succeeded 2
}

func ExampleScheduler() {
	bp, _ := blueprint.Parse("s.yaml", []byte("version: 1\nname: s\nstart: a\nnodes:\n  a: {type: flaky, on_pass: ok, on_fail: {to: a, max: 1}}\n  ok: {type: succeed}\n"),
		blueprint.WithTypes(blueprint.MapTypes{"flaky": {Name: "flaky"}}))
	s := runtime.NewScheduler(bp)
	for _, in := range []runtime.Event{
		{Type: runtime.EvRunStarted},
		{Type: runtime.EvNodeFinished, Node: "a", Attempt: 1, Outcome: runtime.OutcomeFail},
		{Type: runtime.EvNodeFinished, Node: "a", Attempt: 2, Outcome: runtime.OutcomeFail},
	} {
		cmds, _ := s.Apply(in)
		for _, c := range cmds {
			fmt.Println(strings.TrimSpace(fmt.Sprintf("%s %s#%d %s %s", c.Type, c.Node, c.Attempt, c.Edge, c.Status)))
		}
	}
	// Output:
	// node_started a#1
	// edge_taken a#0 a.on_fail
	// node_started a#2
	// run_finished #0  handed_off
}
