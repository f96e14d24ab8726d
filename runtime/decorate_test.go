package runtime_test

import (
	"context"
	"strings"
	"testing"

	"github.com/sandgate/sandgate/blueprint"
	"github.com/sandgate/sandgate/runtime"
)

// wrapped tags a node's outputs with the decorators it went through.
type wrapped struct {
	inner runtime.Node
	tag   string
}

func (w wrapped) Run(ctx context.Context, in *runtime.Input) (*runtime.Result, error) {
	res, err := w.inner.Run(ctx, in)
	if res != nil {
		prev, _ := res.Outputs["prompt"].(string)
		res.Outputs["prompt"] = prev + w.tag
	}
	return res, err
}

func tagger(tag string) runtime.Decorator {
	return func(spec blueprint.NodeType, f runtime.Factory) runtime.Factory {
		if !spec.Gate {
			return f
		}
		return func(n *blueprint.Node) (runtime.Node, error) {
			inner, err := f(n)
			return wrapped{inner: inner, tag: tag}, err
		}
	}
}

// Decorators reach every type that asks for them, including types
// registered after the decorator, in the order they were added; other
// types keep their own factory. Gate declarations reach the blueprint.
func TestDecorateAppliesToLaterTypes(t *testing.T) {
	reg := runtime.NewRegistry()
	reg.Decorate(tagger("+a"))
	reg.Decorate(tagger("+b"))
	gate := scriptType("checker")
	gate.Spec.Gate = true
	for _, ty := range []runtime.Type{scriptType("plain"), gate} {
		if err := reg.Register(ty); err != nil {
			t.Fatal(err)
		}
	}
	bp, err := reg.Parse("t.yaml", []byte("version: 1\nname: d\nstart: p\nnodes:\n  p: {type: plain, next: c}\n  c: {type: checker, next: done}\n  done: {type: succeed}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if bp.Nodes["p"].Gate || !bp.Nodes["c"].Gate {
		t.Fatalf("Node.Gate: p=%v c=%v", bp.Nodes["p"].Gate, bp.Nodes["c"].Gate)
	}
	rt := &runtime.Runtime{Registry: reg, RunsDir: t.TempDir()}
	sum, err := rt.Run(context.Background(), bp, runtime.RunOptions{Workspace: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]any{}
	for _, a := range sum.Attempts {
		got[a.Node] = a.Outputs["prompt"]
	}
	if got["p"] != "" || got["c"] != "+a+b" {
		t.Fatalf("decorated outputs: %v", got)
	}
}

func TestRegisterRefusesTerminalGate(t *testing.T) {
	ty := scriptType("stop")
	ty.Spec.Gate, ty.Spec.Terminal = true, true
	err := runtime.NewRegistry().Register(ty)
	if err == nil || !strings.Contains(err.Error(), "a terminal type cannot be a gate") {
		t.Fatalf("want a refusal, got %v", err)
	}
}
