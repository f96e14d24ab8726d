// Package testnodes has node types for tests of the Temporal runner: a
// step whose verdicts follow a list (one per attempt), and which can wait
// for a file or sleep or pad its feedback, so tests drive a run's path without a sandbox.
package testnodes

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/sandgate/sandgate/blueprint"
	"github.com/sandgate/sandgate/runtime"
)

type step struct{ spec *blueprint.Node }

// Run marks the attempt in the workspace (runs.log), sleeps if asked
// (until canceled), then returns the attempt's scripted verdict.
func (n *step) Run(ctx context.Context, in *runtime.Input) (*runtime.Result, error) {
	if f, err := os.OpenFile(filepath.Join(in.Workspace, "runs.log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644); err == nil {
		fmt.Fprintf(f, "%s#%d\n", in.NodeID, in.Attempt)
		f.Close()
	}
	if d, ok := n.spec.Config["sleep"].(time.Duration); ok {
		select {
		case <-time.After(d):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	verdicts, _ := n.spec.Config["outcomes"].([]string)
	v := "pass"
	if len(verdicts) > 0 {
		v = verdicts[min(in.Attempt, len(verdicts))-1]
	}
	res := &runtime.Result{Outputs: map[string]any{"attempt": in.Attempt, "feedback": in.Feedback}}
	switch v {
	case "error":
		return nil, fmt.Errorf("scripted error on attempt %d", in.Attempt)
	case "fail":
		res.Outcome, res.Feedback = runtime.OutcomeFail, fmt.Sprintf("%s failed on attempt %d", in.NodeID, in.Attempt)
		// A long feedback makes a large journal (tests of its size).
		if pad, _ := n.spec.Config["feedback_bytes"].(int); pad > len(res.Feedback) {
			res.Feedback += strings.Repeat(".", pad-len(res.Feedback))
		}
	case "handoff":
		res.Outcome, res.Reason = runtime.OutcomeHandoff, "scripted hand-off"
	default:
		res.Outcome = runtime.OutcomePass
	}
	return res, nil
}

// Registry returns a registry with the step type.
func Registry() *runtime.Registry {
	r := runtime.NewRegistry()
	err := r.Register(runtime.Type{
		Spec: blueprint.NodeType{Name: "step", Fields: map[string]blueprint.Field{
			"outcomes": {Kind: blueprint.KindStringList},
			"sleep":    {Kind: blueprint.KindDuration},
			// feedback_bytes pads a failed attempt's feedback to that size.
			"feedback_bytes": {Kind: blueprint.KindInt},
		}, Outputs: map[string]blueprint.Kind{"attempt": blueprint.KindInt, "feedback": blueprint.KindString}},
		New: func(spec *blueprint.Node) (runtime.Node, error) { return &step{spec: spec}, nil },
	})
	if err != nil {
		panic(err)
	}
	return r
}

// Chain is a blueprint of n step nodes in a row.
func Chain(n int) string {
	s := "version: 1\nname: chain\nstart: s1\nnodes:\n"
	for i := 1; i <= n; i++ {
		next := fmt.Sprintf("s%d", i+1)
		if i == n {
			next = "done"
		}
		s += fmt.Sprintf("  s%d: {type: step, next: %s}\n", i, next)
	}
	return s + "  done: {type: succeed}\n"
}
