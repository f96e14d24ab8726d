package nodes_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sandgate/sandgate/blueprint"
	"github.com/sandgate/sandgate/nodes"
	"github.com/sandgate/sandgate/nodes/internal/nodetest"
	"github.com/sandgate/sandgate/runtime"
)

// funcNode is a third-party node whose Run is a test's function.
type funcNode func(ctx context.Context, in *runtime.Input, w *nodes.Workspace) (*runtime.Result, error)

func (f funcNode) Run(ctx context.Context, in *runtime.Input) (*runtime.Result, error) {
	w, _ := nodes.ServiceWorkspace.Get(in)
	return f(ctx, in, w)
}

// funcType declares a third-party type, a gate or not, running f.
func funcType(name string, gate bool, f funcNode) runtime.Type {
	return runtime.Type{Spec: blueprint.NodeType{Name: name, Gate: gate},
		New: func(*blueprint.Node) (runtime.Node, error) { return f, nil }}
}

func pass(context.Context, *runtime.Input, *nodes.Workspace) (*runtime.Result, error) {
	return &runtime.Result{Outcome: runtime.OutcomePass, Details: map[string]any{"checked": "everything"}}, nil
}

// customRun runs src with the types registered into the built-in registry
// after the fact, as an embedder would.
func customRun(t *testing.T, src string, types ...runtime.Type) *runtime.Summary {
	t.Helper()
	h := nodetest.NewHarness(t, nodetest.SeedRepo(t))
	for _, ty := range types {
		if err := h.RT.Registry.Register(ty); err != nil {
			t.Fatal(err)
		}
	}
	return h.Run(t, src, nil)
}

func gateOf(t *testing.T, sum *runtime.Summary, node string) map[string]any {
	t.Helper()
	g, _ := nodetest.ReadVerify(t, sum.Dir)["gates"].(map[string]any)[node].(map[string]any)
	if g == nil {
		t.Fatalf("verify.json has no verdict of %s", node)
	}
	return g
}

// The custom gate passes: promotion proceeds, and verify.json shows the
// verdict under the node's id with its type as kind and its details.
func TestCustomGatePassPromotes(t *testing.T) {
	sum := customRun(t, `version: 1
name: todo-pass
start: fix
nodes:
  fix: {type: shell, run: "sed -i 's/a - b/a + b/' calc.go", next: todo}
  todo: {type: no_todo, on_pass: commit, on_fail: stuck}
  commit: {type: git_commit, message: "fix: Add adds", next: done}
  done: {type: succeed}
  stuck: {type: handoff}
`, NoTodoType())
	if sum.Status != runtime.StatusSucceeded {
		t.Fatalf("want the commit, got %s: %s", sum.Status, sum.Reason)
	}
	if _, err := os.Stat(filepath.Join(sum.Dir, "commit.json")); err != nil {
		t.Fatalf("no commit: %v", err)
	}
	g := gateOf(t, sum, "todo")
	if g["kind"] != "no_todo" || g["pass"] != true || len(g["fingerprint"].(string)) != 64 {
		t.Fatalf("verdict: %v", g)
	}
	if v := nodetest.ReadVerify(t, sum.Dir); v["no_todo"] != "pass" || v["pass"] != true {
		t.Fatalf("verify.json summary: %v", v)
	}
}

// The custom gate fails: nothing is committed, the hand-off names it and
// its details are recorded.
func TestCustomGateFailBlocks(t *testing.T) {
	sum := customRun(t, `version: 1
name: todo-fail
start: fix
nodes:
  fix: {type: shell, run: "echo '// TODO: overflow' >> calc.go", next: todo}
  todo: {type: no_todo, next: commit}
  commit: {type: git_commit, next: done}
  done: {type: succeed}
`, NoTodoType())
	nodetest.AssertNothingPromoted(t, sum)
	if !strings.Contains(sum.Reason, "gate todo failed (the change adds 1 TODO)") {
		t.Fatalf("want the hand-off to name todo, got %s: %s", sum.Status, sum.Reason)
	}
	g := gateOf(t, sum, "todo")
	todos, _ := g["details"].(map[string]any)["todos"].([]any)
	if g["pass"] != false || len(todos) != 1 || todos[0] != "// TODO: overflow" {
		t.Fatalf("verdict: %v", g)
	}
}

// Promotion requires every gate node before it, custom ones included, even
// when the path taken skipped it; a gate only after promotion is not
// required.
func TestCustomGateRequiredBeforePromotion(t *testing.T) {
	cases := []struct {
		name, nodes, want string
	}{
		{"skipped before commit", `
  cap:
    type: diff_cap
    max_lines: 10
    edges:
      - {to: commit, when: "outcome == 'pass'"}
      - {to: todo}
  todo: {type: no_todo, next: commit}
  commit: {type: git_commit, next: done}`, "gate todo has not judged this change"},
		{"after commit", `
  cap: {type: diff_cap, max_lines: 10, next: commit}
  commit: {type: git_commit, next: todo}
  todo: {type: no_todo, next: done}`, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src := "version: 1\nname: req\nstart: fix\nnodes:\n  fix: {type: shell, run: \"sed -i 's/a - b/a + b/' calc.go\", next: cap}" +
				c.nodes + "\n  done: {type: succeed}\n"
			sum := customRun(t, src, NoTodoType())
			if c.want == "" {
				if sum.Status != runtime.StatusSucceeded {
					t.Fatalf("want the commit, got %s: %s", sum.Status, sum.Reason)
				}
				return
			}
			nodetest.AssertNothingPromoted(t, sum)
			if !strings.Contains(sum.Reason, c.want) {
				t.Fatalf("want %q, got %s: %s", c.want, sum.Status, sum.Reason)
			}
		})
	}
}

// Attacks on the verdict: a custom gate or node tries to vouch for a change
// it did not judge. Every case must end with nothing promoted.
func TestCustomGateCannotVouchUnseen(t *testing.T) {
	writeThenPass := func(script string) funcNode {
		return func(ctx context.Context, in *runtime.Input, w *nodes.Workspace) (*runtime.Result, error) {
			if _, err := w.Exec(ctx, script, 0); err != nil {
				return nil, err
			}
			return &runtime.Result{Outcome: runtime.OutcomePass}, nil
		}
	}
	cases := []struct {
		name, graph, want string
		ty                runtime.Type
	}{
		{"change after the pass", `
  g: {type: no_todo, next: sneak}
  sneak: {type: shell, run: "echo '// TODO: later' >> calc.go", next: commit}`,
			"gate g judged an earlier version of the change", NoTodoType()},
		{"gate writes the fix while judging", `
  g: {type: sneaky, next: commit}`,
			"gate g failed (the workspace changed while the gate ran: ./, calc.go (part of the change))", funcType("sneaky", true, writeThenPass("sed -i 's/a - b/a + b/' calc.go"))},
		{"gate swaps and restores while judging", `
  g: {type: sneaky, next: commit}`,
			"gate g failed (the workspace changed while the gate ran: ./, calc.go (part of the change))", funcType("sneaky", true, writeThenPass("cp calc.go /tmp/c; sed -i 's/a - b/a + b/' calc.go; cp /tmp/c calc.go"))},
		{"details that cannot be recorded", `
  g: {type: odd, next: commit}`,
			"gate g failed (the gate's details cannot be recorded", funcType("odd", true,
				func(context.Context, *runtime.Input, *nodes.Workspace) (*runtime.Result, error) {
					return &runtime.Result{Outcome: runtime.OutcomePass, Details: map[string]any{"ch": make(chan int)}}, nil
				})},
		{"a node not declared a gate passes", `
  g: {type: claims, next: commit}`,
			"no gate has judged this change", funcType("claims", false, pass)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src := "version: 1\nname: vouch\nstart: prep\nnodes:\n  prep: {type: shell, run: \"true\", next: g}" +
				c.graph + "\n  commit: {type: git_commit, next: done}\n  done: {type: succeed}\n"
			sum := customRun(t, src, c.ty)
			nodetest.AssertNothingPromoted(t, sum)
			all := sum.Reason
			for _, a := range sum.Attempts {
				all += "\n" + a.Feedback
			}
			if !strings.Contains(all, c.want) {
				t.Fatalf("want %q, got %s: %s", c.want, sum.Status, all)
			}
		})
	}
}

// A custom gate that breaks leaves a failed verdict, not nothing: an
// earlier pass cannot stand in for the judgement that did not happen.
func TestCustomGateBreakRecordsFailure(t *testing.T) {
	broke := funcType("broke", true, func(context.Context, *runtime.Input, *nodes.Workspace) (*runtime.Result, error) {
		return nil, errors.New("service unreachable")
	})
	sum := customRun(t, `version: 1
name: broke
start: g
nodes:
  g: {type: broke, next: commit}
  commit: {type: git_commit, next: done}
  done: {type: succeed}
`, broke)
	nodetest.AssertBrokeUnpromoted(t, sum, "g", "service unreachable")
	if g := gateOf(t, sum, "g"); g["pass"] != false || g["reason"] != "the gate broke: service unreachable" {
		t.Fatalf("verdict: %v", g)
	}
}
