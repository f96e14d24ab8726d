package nodes

import (
	"fmt"

	"github.com/sandgate/sandgate/blueprint"
	"github.com/sandgate/sandgate/nodes/agent"
	"github.com/sandgate/sandgate/runtime"
)

// Options configure the built-in node types of a registry.
type Options struct {
	// Agent configures agent nodes (model override, recording, the
	// operator's endpoint and key).
	Agent agent.Options
	// AllowEnv lists credentials blueprints may pass into the box through
	// sandbox.env (the CLI's --allow-env); give EnvOptions.AllowEnv the same.
	AllowEnv []string
	// AllowEndpoints lists model endpoints blueprints may name in base_url,
	// with the api_key_env to send there (the CLI's --allow-endpoint).
	AllowEndpoints []string
}

// factories maps each implemented built-in type to its constructor.
func factories(o Options) map[string]runtime.Factory {
	return map[string]runtime.Factory{
		"agent":       agent.Factory(o.Agent),
		"shell":       newShell,
		"lint":        newLint,
		"test":        newTest,
		"diff_cap":    newDiffCap,
		"protect":     newProtect,
		"git_commit":  newGitCommit,
		"git_push":    newGitPush,
		"review":      newReview,
		"parity":      newParity,
		"apply_patch": newApplyPatch,
	}
}

// Register adds every implemented built-in node type to r.
// Blueprints loaded through r (Registry.Load, resumes) get the operator's
// allowances from o; without them credentials stay out of the box and
// blueprints cannot choose where keys go.
func Register(r *runtime.Registry, o Options) error {
	o.Agent.AllowEndpoints = append(o.Agent.AllowEndpoints, o.AllowEndpoints...)
	r.AddLoadOptions(blueprint.WithAllowEnv(o.AllowEnv...), blueprint.WithAllowEndpoints(o.Agent.AllowEndpoints...))
	fs := factories(o)
	for _, spec := range Specs() {
		f, ok := fs[spec.Name]
		if !ok {
			continue
		}
		if err := r.Register(runtime.Type{Spec: spec, New: f}); err != nil {
			return err
		}
	}
	return nil
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

// spec returns the declaration of a built-in type by name.
func spec(name string) blueprint.NodeType {
	for _, s := range Specs() {
		if s.Name == name {
			return s
		}
	}
	panic("nodes: no spec for " + name)
}
