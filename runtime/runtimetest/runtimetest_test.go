package runtimetest_test

import (
	"context"
	"testing"

	"github.com/sandgate/sandgate/blueprint"
	"github.com/sandgate/sandgate/runtime"
	"github.com/sandgate/sandgate/runtime/runtimetest"
)

// echo is a minimal well-behaved node type.
type echo struct{ word string }

func (e *echo) Run(ctx context.Context, in *runtime.Input) (*runtime.Result, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return &runtime.Result{Outcome: runtime.OutcomePass, Outputs: map[string]any{"word": e.word}}, nil
}

var _ runtime.Node = (*echo)(nil)

func echoType() runtime.Type {
	return runtime.Type{
		Spec: blueprint.NodeType{Name: "echo", Doc: "publishes a word",
			Fields:  map[string]blueprint.Field{"word": {Kind: blueprint.KindString, Required: true}},
			Outputs: map[string]blueprint.Kind{"word": blueprint.KindString}},
		New: func(spec *blueprint.Node) (runtime.Node, error) {
			return &echo{word: spec.Config["word"].(string)}, nil
		},
	}
}

func TestEchoConforms(t *testing.T) {
	runtimetest.Run(t, runtimetest.Config{Type: echoType(), Body: "word: hello"})
}
