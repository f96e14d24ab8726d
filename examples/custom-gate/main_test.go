package main

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/sandgate/sandgate/blueprint"
	"github.com/sandgate/sandgate/examples/internal/demorepo"
	"github.com/sandgate/sandgate/nodes"
	"github.com/sandgate/sandgate/runtime"
	"github.com/sandgate/sandgate/runtime/runtimetest"
	"github.com/sandgate/sandgate/sandbox"
)

// TestMain lets the test binary serve as the sandbox's init process.
func TestMain(m *testing.M) {
	sandbox.Main()
	os.Exit(m.Run())
}

// TestNoTodoConforms runs the node conformance suite against the gate
// type, on a clean workspace (it passes) and on one whose change adds a
// TODO (it fails): declaration, results, concurrent attempts on one
// instance (run under -race), cancellation and a real run.
func TestNoTodoConforms(t *testing.T) {
	for name, edit := range map[string]string{"clean": "", "todo": "// TODO: later"} {
		t.Run(name, func(t *testing.T) {
			runtimetest.Run(t, runtimetest.Case{Type: NoTodoType(), Body: "marker: TODO", Prepare: environment(t, edit)})
		})
	}
}

// TestNoTodoVerdict checks the verdict itself: a change adding the marker
// fails the gate, naming the line; a change without it passes.
func TestNoTodoVerdict(t *testing.T) {
	tests := []struct {
		name, edit string
		want       runtime.Outcome
	}{
		{"no change", "", runtime.OutcomePass},
		{"plain line", "// Sub is next.", runtime.OutcomePass},
		{"adds a TODO", "// TODO: later", runtime.OutcomeFail},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			reg := nodes.NewRegistry()
			if err := reg.Register(NoTodoType()); err != nil {
				t.Fatal(err)
			}
			bp, err := reg.Load("blueprint.yaml")
			if err != nil {
				t.Fatal(err)
			}
			env, err := environment(t, tc.edit)(context.Background(), t.TempDir(), bp, false)
			if err != nil {
				t.Fatal(err)
			}
			defer env.Close()
			node, err := NoTodoType().New(&blueprint.Node{ID: "todo", Type: "no_todo", Config: map[string]any{}})
			if err != nil {
				t.Fatal(err)
			}
			res, err := node.Run(context.Background(), &runtime.Input{NodeID: "todo", Workspace: env.Workspace, Services: env.Services})
			if err != nil {
				t.Fatal(err)
			}
			if res.Outcome != tc.want {
				t.Fatalf("outcome %s (%s), want %s", res.Outcome, res.Reason, tc.want)
			}
		})
	}
}

// environment prepares a sandboxed workspace over the demo repository and
// appends the line edit, when not empty, to calc.go in it (inside the
// box, as a node would: the harness reads the change from the overlay).
func environment(t *testing.T, edit string) runtime.Prepare {
	repo, err := demorepo.Create()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(repo) })
	prepare := nodes.Environment(nodes.EnvOptions{Repo: repo, CacheDir: t.TempDir()})
	return func(ctx context.Context, runDir string, bp *blueprint.Blueprint, resume bool) (*runtime.Environment, error) {
		env, err := prepare(ctx, runDir, bp, resume)
		if err != nil || edit == "" {
			return env, err
		}
		w, _ := nodes.ServiceWorkspace.Get(&runtime.Input{Services: env.Services})
		res, err := w.Exec(ctx, "echo '"+edit+"' >> calc.go", time.Minute)
		if err == nil && res.ExitCode != 0 {
			err = fmt.Errorf("edit calc.go in the box: exit %d: %s", res.ExitCode, res.Output)
		}
		if err != nil {
			env.Close()
			return nil, err
		}
		return env, nil
	}
}
