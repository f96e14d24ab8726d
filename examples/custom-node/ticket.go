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
//
// The struct is both the node's configuration and the node: its tags
// declare the keys (validation, JSON Schema and docs derive from them) and
// the factory decodes a blueprint node into it with blueprint.Decode.
type Ticket struct {
	Queue string `sg:"queue,required,notemplate" doc:"directory of the ticket queue"`
	Title string `sg:"title" doc:"ticket title; may use templates"`
}

var _ runtime.Node = (*Ticket)(nil)

// TicketType declares the node type: its keys (from Ticket's tags),
// outputs and factory.
func TicketType() runtime.Type {
	return runtime.Type{
		Spec: blueprint.Configured[Ticket](blueprint.NodeType{
			Name:    "ticket",
			Doc:     "files a ticket with the failing gate's feedback",
			Outputs: map[string]blueprint.Kind{"ticket": blueprint.KindString},
		}),
		New: func(spec *blueprint.Node) (runtime.Node, error) {
			t, err := blueprint.Decode[Ticket](spec)
			return &t, err
		},
	}
}

// Run implements runtime.Node. The title is rendered per attempt, since it
// may name outputs of earlier nodes; the decoded Title is its source.
func (t *Ticket) Run(ctx context.Context, in *runtime.Input) (*runtime.Result, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	title, err := in.Render("title")
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(t.Queue, 0o755); err != nil {
		return nil, err
	}
	path := filepath.Join(t.Queue, fmt.Sprintf("%s-%s-%d.json", in.RunID, in.NodeID, in.Attempt))
	body, err := json.MarshalIndent(map[string]string{"title": title, "details": in.Feedback, "run": in.RunID}, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(path, body, 0o644); err != nil {
		return nil, err
	}
	return &runtime.Result{Outcome: runtime.OutcomePass, Outputs: map[string]any{"ticket": path}}, nil
}
