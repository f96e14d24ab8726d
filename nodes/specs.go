package nodes

import (
	"github.com/sandgate/sandgate/blueprint"
	"github.com/sandgate/sandgate/nodes/agent"
	"github.com/sandgate/sandgate/nodes/internal/checks"
	"github.com/sandgate/sandgate/nodes/internal/ci"
	"github.com/sandgate/sandgate/nodes/internal/promote"
	"github.com/sandgate/sandgate/nodes/internal/review"
	"github.com/sandgate/sandgate/nodes/internal/testgate"
	"github.com/sandgate/sandgate/runtime"
)

// builtins are the built-in node types, each declared by the package that
// implements it, built with the operator's options: the agent's, the URL
// prefixes a token may go to (allowed), and the local review queue's
// default directory. The order is the order of the docs and the schema.
func builtins(a agent.Options, allowed []string, reviewDir string) []runtime.Type {
	return []runtime.Type{
		agent.Type(a),
		checks.ShellType(),
		checks.LintType(),
		testgate.Type(),
		checks.DiffCapType(),
		checks.ProtectType(),
		checks.ParityType(),
		checks.ApplyPatchType(),
		promote.CommitType(),
		promote.PushType(allowed),
		ci.Type(allowed),
		review.Type(reviewDir, allowed),
	}
}

// Specs returns the declarations of every built-in node type: the keys each
// accepts and the outputs each publishes. Validation and the JSON Schema are
// generated from these; each type's keys come from the tags of its config
// struct, which its factory decodes.
func Specs() []blueprint.NodeType {
	var out []blueprint.NodeType
	for _, t := range builtins(agent.Options{}, nil, "") {
		out = append(out, t.Spec)
	}
	return out
}

// Types returns the built-in node types as a blueprint.TypeSet.
func Types() blueprint.MapTypes {
	m := blueprint.MapTypes{}
	for _, t := range Specs() {
		m[t.Name] = t
	}
	return m
}
