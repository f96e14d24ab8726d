// Package runtimetest is a conformance suite for custom node types, in the
// spirit of testing/slogtest: a node type that passes it plugs into the
// runtime without surprises.
//
//	func TestMyNode(t *testing.T) {
//		runtimetest.Run(t, runtimetest.Config{Type: mynode.Type(), Body: "url: http://127.0.0.1:1"})
//	}
package runtimetest

import (
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/sandgate/sandgate/blueprint"
	"github.com/sandgate/sandgate/runtime"
)

// Config describes the node type under test.
type Config struct {
	Type runtime.Type
	// Body is the node's YAML configuration without type or edges, e.g.
	// "run: go vet ./...". It must be valid for the type.
	Body string
	// Workspace is the directory the node runs in (default: a temp dir).
	Workspace string
	// Services are passed to the node.
	Services map[string]any
	// CancelWithin bounds how long Run may take to return once its context
	// is canceled (default 5s).
	CancelWithin time.Duration
}

// Run checks the node type's declaration, its factory, its results and its
// response to cancellation, and then runs it inside a real blueprint.
func Run(t *testing.T, c Config) {
	t.Helper()
	if c.Workspace == "" {
		c.Workspace = t.TempDir()
	}
	if c.CancelWithin == 0 {
		c.CancelWithin = 5 * time.Second
	}
	bp := load(t, c)
	if bp == nil {
		return
	}
	t.Run("declaration", func(t *testing.T) { checkSpec(t, c.Type.Spec) })
	t.Run("result", func(t *testing.T) { checkResult(t, c, bp) })
	t.Run("cancel", func(t *testing.T) { checkCancel(t, c, bp) })
	t.Run("in a run", func(t *testing.T) { checkInRun(t, c, bp) })
}

func load(t *testing.T, c Config) *blueprint.Blueprint {
	t.Helper()
	reg := runtime.NewRegistry()
	if err := reg.Register(c.Type); err != nil {
		t.Fatalf("register: %v", err)
	}
	src := fmt.Sprintf("version: 1\nname: conformance\nstart: node\nnodes:\n  node:\n    type: %s\n    on_pass: ok\n    on_fail: no\n%s  ok: {type: succeed}\n  no: {type: fail}\n",
		c.Type.Spec.Name, indent(c.Body))
	bp, err := blueprint.Parse("conformance.yaml", []byte(src), blueprint.WithTypes(reg))
	if err != nil {
		t.Fatalf("the node's configuration does not validate:\n%v\n---\n%s", err, src)
		return nil
	}
	return bp
}

func indent(body string) string {
	out := ""
	for _, l := range splitLines(body) {
		out += "    " + l + "\n"
	}
	return out
}

func splitLines(s string) []string {
	var out []string
	start := 0
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' {
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	return out
}

func checkSpec(t *testing.T, s blueprint.NodeType) {
	if s.Terminal {
		t.Error("custom node types must not be terminal")
	}
	if s.Doc == "" {
		t.Error("NodeType.Doc is empty: users read it in the schema")
	}
	if _, ok := s.Outputs["outcome"]; ok {
		t.Error(`"outcome" is set by the runtime; do not declare it as an output`)
	}
	for name, f := range s.Fields {
		if f.Kind == "" {
			t.Errorf("field %s has no kind", name)
		}
	}
}

func newInput(t *testing.T, c Config, bp *blueprint.Blueprint) *runtime.Input {
	return &runtime.Input{RunID: "conformance", NodeID: "node", Attempt: 1, Spec: bp.Nodes["node"],
		Scope: &blueprint.Scope{}, Workspace: c.Workspace, Dir: t.TempDir(), Services: c.Services}
}

func checkResult(t *testing.T, c Config, bp *blueprint.Blueprint) {
	n, err := c.Type.New(bp.Nodes["node"])
	if err != nil {
		t.Fatalf("factory: %v", err)
	}
	res, err := n.Run(context.Background(), newInput(t, c, bp))
	if err != nil {
		t.Logf("node returned an error (allowed, but check it is a real breakage): %v", err)
		return
	}
	if res == nil {
		t.Fatal("nil result without an error")
	}
	switch res.Outcome {
	case runtime.OutcomePass, runtime.OutcomeFail, runtime.OutcomeHandoff:
	default:
		t.Errorf("outcome %q is not pass, fail or handoff", res.Outcome)
	}
	for k, v := range res.Outputs {
		kind, ok := c.Type.Spec.Outputs[k]
		if !ok {
			t.Errorf("output %q is not declared in NodeType.Outputs", k)
			continue
		}
		if !fits(kind, v) {
			t.Errorf("output %q = %#v does not fit declared kind %s", k, v, kind)
		}
	}
}

// fits reports whether a value can be used as the declared kind.
func fits(k blueprint.Kind, v any) bool {
	rv := reflect.ValueOf(v)
	switch k {
	case blueprint.KindString:
		return rv.Kind() == reflect.String
	case blueprint.KindInt:
		return rv.CanInt()
	case blueprint.KindFloat:
		return rv.CanFloat() || rv.CanInt()
	case blueprint.KindBool:
		return rv.Kind() == reflect.Bool
	case blueprint.KindStringList:
		return rv.Kind() == reflect.Slice && rv.Type().Elem().Kind() == reflect.String
	}
	return true
}

func checkCancel(t *testing.T, c Config, bp *blueprint.Blueprint) {
	n, err := c.Type.New(bp.Nodes["node"])
	if err != nil {
		t.Fatalf("factory: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = n.Run(ctx, newInput(t, c, bp))
	}()
	select {
	case <-done:
	case <-time.After(c.CancelWithin):
		t.Fatalf("Run ignored a canceled context for %s", c.CancelWithin)
	}
}

func checkInRun(t *testing.T, c Config, bp *blueprint.Blueprint) {
	reg := runtime.NewRegistry()
	_ = reg.Register(c.Type)
	rt := &runtime.Runtime{Registry: reg, RunsDir: t.TempDir(), Services: c.Services}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	sum, err := rt.Run(ctx, bp, runtime.RunOptions{Workspace: c.Workspace})
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	if sum.Status == runtime.StatusRunning || sum.Status == runtime.StatusCanceled {
		t.Fatalf("run ended %s: %s", sum.Status, sum.Reason)
	}
}
