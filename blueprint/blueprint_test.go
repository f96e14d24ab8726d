package blueprint_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sandgate/sandgate/blueprint"
)

func mustLoad(t *testing.T, path string) *blueprint.Blueprint {
	t.Helper()
	bp, err := blueprint.Load(path, blueprint.WithTypes(testTypes))
	if err != nil {
		t.Fatalf("load %s: %v", path, err)
	}
	return bp
}

func TestIssueExampleShape(t *testing.T) {
	bp := mustLoad(t, "testdata/valid/issue-example.yaml")
	if bp.Start != "implement" || len(bp.Nodes) != 8 || bp.Budget.Timeout != 20*time.Minute {
		t.Fatalf("unexpected blueprint: start=%s nodes=%d timeout=%v", bp.Start, len(bp.Nodes), bp.Budget.Timeout)
	}
	lint := bp.Nodes["lint"]
	if len(lint.Edges) != 2 || lint.Edges[1].Max != 3 || lint.Edges[1].To != "implement" {
		t.Fatalf("lint edges: %+v", lint.Edges)
	}
	// lint's run is a command list, as in nodes: a []any of commands.
	if got, ok := lint.Config["run"].([]any); !ok || len(got) != 1 || got[0] != "gofmt -l . && go vet ./..." {
		t.Fatalf("lint run: %#v", got)
	}
	// 7 runs from start, plus 3+1 extra segments from implement and 1 from
	// implement via test: (1 + 3 + 1 + 1) * 7.
	if bp.WorstCaseRuns != 42 {
		t.Fatalf("worst case = %d, want 42", bp.WorstCaseRuns)
	}
	if len(bp.Warnings) != 1 || !strings.Contains(bp.Warnings[0].Message, "worst case is 42") {
		t.Fatalf("want a max_node_runs warning, got %v", bp.Warnings)
	}
}

func TestEdgeConditionsEvaluate(t *testing.T) {
	bp := mustLoad(t, "testdata/valid/issue-example.yaml")
	edges := bp.Nodes["test"].Edges
	cases := []struct {
		failed int
		want   [2]bool
	}{{0, [2]bool{true, true}}, {3, [2]bool{false, true}}, {9, [2]bool{false, false}}}
	for _, c := range cases {
		s := &blueprint.Scope{Outputs: map[string]map[string]any{"test": {"failed": c.failed, "outcome": "fail"}}}
		for i := 0; i < 2; i++ {
			got, err := edges[i].When.Eval(s)
			if err != nil || got != c.want[i] {
				t.Errorf("failed=%d edge %d: got %v, %v; want %v", c.failed, i, got, err, c.want[i])
			}
		}
	}
}

func TestTemplatesRender(t *testing.T) {
	bp := mustLoad(t, "testdata/valid/issue-example.yaml")
	s := &blueprint.Scope{Inputs: map[string]any{"task": "fix Add"}, Feedback: "lint: calc.go:3:1: bad"}
	got, err := bp.Nodes["implement"].Templates["prompt"].Render(s)
	if err != nil {
		t.Fatal(err)
	}
	if got != "Fix this: fix Add\nlint: calc.go:3:1: bad\n" {
		t.Fatalf("prompt = %q", got)
	}
	msg, err := bp.Nodes["commit"].Templates["message"].Render(s)
	if err != nil || msg != "fix: fix Add" {
		t.Fatalf("message = %q, %v", msg, err)
	}
}

func TestEvalRejectsWrongOutputType(t *testing.T) {
	bp := mustLoad(t, "testdata/valid/issue-example.yaml")
	s := &blueprint.Scope{Outputs: map[string]map[string]any{"test": {"failed": "many"}}}
	if _, err := bp.Nodes["test"].Edges[0].When.Eval(s); err == nil {
		t.Fatal("want an error for a string where an int output belongs")
	}
}

const minimal = `version: 1
name: t
start: a
nodes:
  a: {type: shell, run: "true", next: done}
  done: {type: succeed}
`

func TestWorstCase(t *testing.T) {
	cases := []struct {
		name, nodes string
		want        int
	}{
		{"chain", "  a: {type: shell, run: x, next: b}\n  b: {type: shell, run: x, next: done}\n  done: {type: succeed}\n", 3},
		{"retry", "  a: {type: shell, run: x, next: b}\n  b: {type: shell, run: x, on_pass: done, on_fail: {to: a, max: 2}}\n  done: {type: succeed}\n", 9},
		{"fanout", "  a: {type: shell, run: x, next: [b, c]}\n  b: {type: shell, run: x, next: done}\n  c: {type: shell, run: x, next: done}\n  done: {type: succeed}\n", 5},
		{"exhausted", "  a: {type: shell, run: x, on_pass: done, on_fail: {to: a, max: 1, on_exhausted: h}}\n  h: {type: handoff}\n  done: {type: succeed}\n", 4},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src := "version: 1\nname: t\nstart: a\nnodes:\n" + c.nodes
			bp, err := blueprint.Parse("w.yaml", []byte(src), blueprint.WithTypes(testTypes))
			if err != nil {
				t.Fatal(err)
			}
			if bp.WorstCaseRuns != c.want {
				t.Fatalf("worst case = %d, want %d", bp.WorstCaseRuns, c.want)
			}
		})
	}
}

// TestSyntaxErrorLines checks that YAML syntax errors point at the line
// where the mistake is, not where yaml.v3 happened to notice it.
func TestSyntaxErrorLines(t *testing.T) {
	cases := []struct {
		name, src string
		line      int
	}{
		{"deep bad indent", "version: 1\nname: t\nstart: a\nnodes:\n  a:\n    type: shell\n    run: x\n    next: b\n  b:\n    type: shell\n   run: x\n", 11},
		{"unclosed quote", "version: 1\nname: \"t\nstart: a\n", 2},
		{"tab", "version: 1\nnodes:\n\ta: {}\n", 3},
		{"bad flow", "version: 1\nname: [a, b\nstart: a\n", 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := blueprint.Parse("s.yaml", []byte(c.src))
			var ds blueprint.Diagnostics
			if !errors.As(err, &ds) || len(ds) != 1 {
				t.Fatalf("want one diagnostic, got %v", err)
			}
			if ds[0].Line != c.line || !strings.Contains(ds[0].Message, "syntax error") {
				t.Fatalf("got %s, want line %d", ds[0].Error(), c.line)
			}
		})
	}
}

func TestDiagnosticsJSON(t *testing.T) {
	_, err := blueprint.Load("testdata/invalid/37-many-problems.yaml", blueprint.WithTypes(testTypes))
	var ds blueprint.Diagnostics
	if !errors.As(err, &ds) {
		t.Fatal(err)
	}
	var decoded []map[string]any
	if err := json.Unmarshal(ds.JSON(), &decoded); err != nil {
		t.Fatal(err)
	}
	if len(decoded) != 4 || decoded[0]["path"] != "budget.max_node_runs" || decoded[0]["line"] != 5.0 {
		t.Fatalf("json diagnostics: %s", ds.JSON())
	}
	// Each diagnostic is also reachable through errors.As on the list.
	var one blueprint.Diagnostic
	if !errors.As(err, &one) || one.Line != 5 {
		t.Fatalf("errors.As single diagnostic: %+v", one)
	}
}

func TestRenderers(t *testing.T) {
	bp := mustLoad(t, "testdata/valid/issue-example.yaml")
	m := bp.Mermaid()
	for _, want := range []string{"flowchart TD", `lint -.->|"fail, max 3"| implement`, `done(["done<br/><i>succeed</i>"]):::succeed`, `outputs.test.failed == 0`} {
		if !strings.Contains(m, want) {
			t.Errorf("mermaid lacks %q:\n%s", want, m)
		}
	}
	d := bp.DOT()
	for _, want := range []string{"digraph", `lint -> implement [label="fail, max 3", style=dashed`, `stuck [label="stuck\nhandoff", shape=ellipse`} {
		if !strings.Contains(d, want) {
			t.Errorf("dot lacks %q:\n%s", want, d)
		}
	}
}

func TestJSONSchemaIsValidJSON(t *testing.T) {
	var s map[string]any
	if err := json.Unmarshal(blueprint.JSONSchema(testTypes), &s); err != nil {
		t.Fatal(err)
	}
	props := s["properties"].(map[string]any)
	for _, k := range []string{"version", "name", "inputs", "budget", "sandbox", "start", "nodes"} {
		if _, ok := props[k]; !ok {
			t.Errorf("schema lacks %s", k)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(minimal))
	f.Add([]byte("version: 1\nnodes: {a: {type: shell, edges: [{to: a, when: 'outputs.a.x ${{'}]}}\n"))
	f.Add([]byte("a: &x [*x]\n"))
	f.Add([]byte("nodes:\n  a:\n    prompt: |\n      ${{ inputs.x }\n"))
	f.Fuzz(func(t *testing.T, src []byte) {
		bp, err := blueprint.Parse("fuzz.yaml", src, blueprint.WithTypes(testTypes))
		if err == nil && bp == nil {
			t.Fatal("nil blueprint without error")
		}
		var ds blueprint.Diagnostics
		if err != nil && !errors.As(err, &ds) {
			t.Fatalf("error is not diagnostics: %v", err)
		}
		_ = ds.Pretty()
	})
}

// aliasBomb is a blueprint whose anchors expand to 2^40 values.
func aliasBomb() (blueprint.MapTypes, []byte) {
	types := blueprint.MapTypes{"any": {Name: "any", Fields: map[string]blueprint.Field{"data": {Kind: blueprint.KindAny}}}}
	src := "version: 1\nname: t\nstart: a\nnodes:\n  a:\n    type: any\n    data:\n      l0: &l0 [\"${{ feedback }}\", \"${{ feedback }}\"]\n"
	for i := 1; i < 40; i++ {
		src += fmt.Sprintf("      l%d: &l%d [*l%d, *l%d]\n", i, i, i-1, i-1)
	}
	return types, []byte(src + "    next: done\n  done: {type: succeed}\n")
}

// TestAliasBomb: anchors that expand exponentially are refused, by a cap
// on the values decoded, not expanded. It asserts the refusal, never how
// long it took (a clock limit failed under load): were the cap gone, the
// expansion would not end, and go test's -timeout reports the hang;
// BenchmarkAliasBomb measures the refusal.
func TestAliasBomb(t *testing.T) {
	types, src := aliasBomb()
	_, err := blueprint.Parse("bomb.yaml", src, blueprint.WithTypes(types))
	if err == nil || !strings.Contains(err.Error(), "too many values") {
		t.Fatalf("want the alias bomb refused, got %v", err)
	}
}

func BenchmarkAliasBomb(b *testing.B) {
	types, src := aliasBomb()
	for b.Loop() {
		if _, err := blueprint.Parse("bomb.yaml", src, blueprint.WithTypes(types)); err == nil {
			b.Fatal("the alias bomb loaded")
		}
	}
}

func TestParseSize(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int64
		err  string
	}{
		{"512MiB", 512 << 20, ""},
		{"4GiB", 4 << 30, ""},
		{"1TiB", 1 << 40, ""},
		{"100B", 100, ""},
		{"12XB", 0, `got "12XB"`},
		{"4GB", 0, "did you mean 4GiB?"},
		{"4g", 0, "did you mean 4GiB?"},
		{"-1MiB", 0, "expected a size"},
		{"MiB", 0, "expected a size"},
		{"99999999TiB", 0, "too large"},
	} {
		got, err := blueprint.ParseSize(c.in)
		if c.err == "" && (err != nil || got != c.want) {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", c.in, got, err, c.want)
		}
		if c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)) {
			t.Errorf("ParseSize(%q) error = %v; want one containing %q", c.in, err, c.err)
		}
	}
}

func TestSandboxDisk(t *testing.T) {
	bp, err := blueprint.Parse("d.yaml", []byte("version: 1\nname: t\nsandbox: {disk: 512MiB}\nstart: a\nnodes:\n  a: {type: succeed}\n"))
	if err != nil || bp.Sandbox.Disk != 512<<20 {
		t.Fatalf("disk = %v, %v; want 512 MiB", bp.Sandbox.Disk, err)
	}
	_, err = blueprint.Parse("d.yaml", []byte("version: 1\nname: t\nsandbox: {disk: 1MiB}\nstart: a\nnodes:\n  a: {type: succeed}\n"))
	if err == nil || !strings.Contains(err.Error(), "d.yaml:3:17: sandbox.disk: 1MiB is outside 16MiB..16TiB") {
		t.Fatalf("a 1 MiB disk loaded: %v", err)
	}
}
