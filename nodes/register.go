package nodes

import (
	"fmt"
	"slices"

	"github.com/sandgate/sandgate/blueprint"
	"github.com/sandgate/sandgate/nodes/agent"
	"github.com/sandgate/sandgate/nodes/internal/gate"
	"github.com/sandgate/sandgate/runtime"
)

// Options configure the built-in node types of a registry.
type Options struct {
	// Agent configures agent nodes (model override, recording, the
	// operator's endpoint and key).
	Agent agent.Options
	// AllowEnv lists credentials blueprints may pass into the box through
	// sandbox.env (the CLI's --allow-env); EnvOptions.AllowEnv must be the
	// same list: Config's one AllowEnv sets both (Config.Options,
	// Config.EnvOptions, NewRuntime), so the two cannot differ.
	AllowEnv []string
	// AllowEndpoints lists URL prefixes blueprints may send credentials to
	// (the CLI's --allow-endpoint): an agent's base_url with its
	// api_key_env, a git_push remote with its token_env, a review's
	// base_url. GitHub tokens may go to https://github.com and
	// https://api.github.com without it.
	AllowEndpoints []string
	// ReviewDir is where review nodes without a dir key queue local
	// reviews (default .sandgate/reviews under the working directory).
	ReviewDir string
}

// Register adds every implemented built-in node type to r, and makes every
// gate type in r (blueprint.NodeType.Gate), whoever registers it, run on
// the quiesced workspace with its verdict recorded for promotion.
// Blueprints loaded through r (Registry.Load, resumes) get the operator's
// allowances from o; without them credentials stay out of the box and
// blueprints cannot choose where keys go.
func Register(r *runtime.Registry, o Options) error {
	o.Agent.AllowEndpoints = append(o.Agent.AllowEndpoints, o.AllowEndpoints...)
	r.AddLoadOptions(blueprint.WithAllowEnv(o.AllowEnv...), blueprint.WithAllowEndpoints(o.Agent.AllowEndpoints...))
	own := map[string]bool{}
	for _, t := range types(o) {
		if err := r.Register(t); err != nil {
			return err
		}
		own[t.Spec.Name] = true
	}
	// Gate types registered by the embedder, before or after this call,
	// run and record their verdicts as the built-in gates do.
	r.Decorate(gate.Decorator(own))
	return nil
}

// types are the built-in types, each factory guarded.
func types(o Options) []runtime.Type {
	allowed := slices.Concat(o.AllowEndpoints, o.Agent.AllowEndpoints)
	out := builtins(o.Agent, allowed, o.ReviewDir)
	for i, t := range out {
		out[i].New = guard(t.Spec, t.New)
	}
	return out
}

// guard runs the checks validation runs (field types, required keys, enums,
// the type's Check hook) before the factory, so the factories need not
// repeat them, cannot disagree with validate, and never see a value of the
// wrong Go type in a node assembled without loading a file.
func guard(t blueprint.NodeType, f runtime.Factory) runtime.Factory {
	return func(n *blueprint.Node) (runtime.Node, error) {
		if err := blueprint.ConfigError(blueprint.CheckConfig(t, n)); err != nil {
			return nil, err
		}
		return f(n)
	}
}

// NewRegistry returns a registry holding the built-in node types with
// default options.
func NewRegistry() *runtime.Registry { return NewRegistryWith(Options{}) }

// NewRegistryWith returns a registry holding the built-in node types.
func NewRegistryWith(o Options) *runtime.Registry {
	r := runtime.NewRegistry()
	if err := Register(r, o); err != nil {
		panic(fmt.Sprintf("nodes: built-in registration failed: %v", err))
	}
	return r
}
