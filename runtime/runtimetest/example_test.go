package runtimetest_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sandgate/sandgate/blueprint"
	"github.com/sandgate/sandgate/runtime"
	"github.com/sandgate/sandgate/runtime/runtimetest"
)

// wait is a node type that waits and counts its attempts: shared state
// goes through an atomic, and the wait ends early when the attempt is
// canceled.
type wait struct {
	d     time.Duration
	count atomic.Int64
}

func (w *wait) Run(ctx context.Context, in *runtime.Input) (*runtime.Result, error) {
	select {
	case <-time.After(w.d):
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	n := w.count.Add(1)
	return &runtime.Result{Outcome: runtime.OutcomePass, Outputs: map[string]any{"waited": w.d, "attempts": n}}, nil
}

func waitType() runtime.Type {
	return runtime.Type{
		Spec: blueprint.NodeType{Name: "wait", Doc: "waits, then passes",
			Fields:  map[string]blueprint.Field{"for": {Kind: blueprint.KindDuration, Required: true, Doc: "how long"}},
			Outputs: map[string]blueprint.Kind{"waited": blueprint.KindDuration, "attempts": blueprint.KindInt}},
		New: func(spec *blueprint.Node) (runtime.Node, error) {
			return &wait{d: spec.Config["for"].(time.Duration)}, nil
		},
	}
}

// A node type's own tests run the suite with one realistic configuration
// per case, under go test -race.
func ExampleRun() {
	testWaitConforms := func(t *testing.T) {
		runtimetest.Run(t, runtimetest.Case{Type: waitType(), Body: "for: 10ms"})
	}
	_ = testWaitConforms // func TestWaitConforms(t *testing.T) in a _test.go file
}

func TestWaitConforms(t *testing.T) {
	runtimetest.Run(t, runtimetest.Case{Type: waitType(), Body: "for: 10ms"})
}
