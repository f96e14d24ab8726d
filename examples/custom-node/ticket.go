package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/sandgate/sandgate/blueprint"
	"github.com/sandgate/sandgate/runtime"
)

// Ticket files a ticket (here: a JSON file in a queue directory) holding
// the feedback of the node that led to it. It runs in the harness, not the
// sandbox: it touches no repository code.
type Ticket struct {
	queue string
}

var _ runtime.Node = (*Ticket)(nil)

// TicketType declares the node type: its keys, outputs and factory.
func TicketType() runtime.Type {
	return runtime.Type{
		Spec: blueprint.NodeType{
			Name: "ticket",
			Doc:  "files a ticket with the failing gate's feedback",
			Fields: map[string]blueprint.Field{
				"queue": {Kind: blueprint.KindString, Required: true, NoTemplate: true, Doc: "directory of the ticket queue"},
				"title": {Kind: blueprint.KindString, Doc: "ticket title"},
			},
			Outputs: map[string]blueprint.Kind{"ticket": blueprint.KindString},
		},
		New: func(spec *blueprint.Node) (runtime.Node, error) {
			return &Ticket{queue: spec.Config["queue"].(string)}, nil
		},
	}
}

// Run implements runtime.Node.
func (t *Ticket) Run(ctx context.Context, in *runtime.Input) (*runtime.Result, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	title, err := in.Render("title")
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(t.queue, 0o755); err != nil {
		return nil, err
	}
	path := filepath.Join(t.queue, fmt.Sprintf("%s-%s-%d.json", in.RunID, in.NodeID, in.Attempt))
	body, _ := json.MarshalIndent(map[string]string{"title": title, "details": in.Feedback, "run": in.RunID}, "", "  ")
	if err := os.WriteFile(path, body, 0o644); err != nil {
		return nil, err
	}
	return &runtime.Result{Outcome: runtime.OutcomePass, Outputs: map[string]any{"ticket": path}}, nil
}
