package runtime_test

import (
	"context"
	"strings"
	"testing"

	"github.com/sandgate/sandgate/blueprint"
	"github.com/sandgate/sandgate/runtime"
)

// TestRunRefusesAnotherRegistry runs a blueprint loaded through one
// registry on a runtime holding another, whose same-named type would get
// nodes it never validated (here its factory would panic): the run must
// be refused with an error naming the cause, before any factory runs.
func TestRunRefusesAnotherRegistry(t *testing.T) {
	loaded := testRegistry(t)
	bp, err := loaded.Parse("t.yaml", []byte("version: 1\nname: t\nstart: a\nnodes:\n  a: {type: gate, next: done}\n  done: {type: succeed}\n"))
	if err != nil {
		t.Fatal(err)
	}
	other := runtime.NewRegistry()
	if err := other.Register(runtime.Type{Spec: blueprint.NodeType{Name: "gate"},
		New: func(*blueprint.Node) (runtime.Node, error) { panic("factory of the other registry ran") }}); err != nil {
		t.Fatal(err)
	}
	rt := &runtime.Runtime{Registry: other, RunsDir: t.TempDir()}
	sum, err := rt.Run(context.Background(), bp, runtime.RunOptions{Workspace: t.TempDir()})
	if err == nil || sum != nil || !strings.Contains(err.Error(), "another node type registry") {
		t.Fatalf("run with another registry: %v %v", sum, err)
	}
	// The registry it was loaded through runs it.
	rt.Registry = loaded
	if sum, err := rt.Run(context.Background(), bp, runtime.RunOptions{Workspace: t.TempDir()}); err != nil || sum.Status != runtime.StatusSucceeded {
		t.Fatalf("run with its own registry: %v %v", sum, err)
	}
}
