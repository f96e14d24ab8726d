package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/sandgate/sandgate/blueprint"
	"github.com/sandgate/sandgate/nodes"
	"github.com/sandgate/sandgate/runtime"
)

// NoTodo is a gate: it fails when the change adds a line holding Marker.
// It only judges and reports. Because its type declares Gate, the harness
// runs it on the quiesced workspace, records its verdict against the
// change it saw, and refuses promotion until that verdict passes on the
// change as it is.
//
// The struct is both the configuration (its tags declare the keys) and
// the node.
type NoTodo struct {
	Marker string `sg:"marker,notemplate,default=TODO" doc:"text an added line may not hold"`
}

var _ runtime.Node = (*NoTodo)(nil)

// NoTodoType declares the gate type.
func NoTodoType() runtime.Type {
	return runtime.Type{
		Spec: blueprint.Configured[NoTodo](blueprint.NodeType{
			Name: "no_todo", Stage: "verify", Gate: true,
			Doc: "fails when the change adds a line holding the marker (TODO)",
		}),
		New: func(spec *blueprint.Node) (runtime.Node, error) {
			g, err := blueprint.Decode[NoTodo](spec)
			return &g, err
		},
	}
}

// Run implements runtime.Node. A finding is a failed verdict, not an
// error: errors are for a gate that could not judge at all.
func (g *NoTodo) Run(ctx context.Context, in *runtime.Input) (*runtime.Result, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	w, ok := nodes.ServiceWorkspace.Get(in)
	if !ok {
		return nil, errors.New("no_todo needs the run's workspace (nodes.Environment)")
	}
	diff, err := w.Diff()
	if err != nil {
		return nil, fmt.Errorf("no_todo: diff the change: %w", err)
	}
	var found []string
	for _, line := range strings.Split(diff, "\n") {
		if strings.HasPrefix(line, "+") && !strings.HasPrefix(line, "+++") && strings.Contains(line, g.Marker) {
			found = append(found, strings.TrimSpace(line[1:]))
		}
	}
	if len(found) == 0 {
		return &runtime.Result{Outcome: runtime.OutcomePass}, nil
	}
	return &runtime.Result{
		Outcome:  runtime.OutcomeFail,
		Reason:   fmt.Sprintf("the change adds %d line(s) with %s", len(found), g.Marker),
		Feedback: "Resolve these before the change can leave:\n" + strings.Join(found, "\n"),
		Details:  map[string]any{"lines": found},
	}, nil
}
