package nodes

import (
	"fmt"

	"github.com/sandgate/sandgate/blueprint"
	"github.com/sandgate/sandgate/nodes/agent"
	"github.com/sandgate/sandgate/runtime"
)

// Options configure the built-in node types of a registry.
type Options struct {
	// Agent configures agent nodes (model override, recording).
	Agent agent.Options
}

// factories maps each implemented built-in type to its constructor.
func factories(o Options) map[string]runtime.Factory {
	return map[string]runtime.Factory{
		"agent":       agent.Factory(o.Agent),
		"shell":       newShell,
		"lint":        quietly(newLint, true),
		"test":        quietly(newTest, true),
		"diff_cap":    quietly(newDiffCap, true),
		"protect":     quietly(newProtect, true),
		"git_commit":  quietly(newGitCommit, false),
		"git_push":    quietly(newGitPush, false),
		"review":      quietly(newReview, false),
		"parity":      quietly(newParity, true),
		"apply_patch": newApplyPatch,
	}
}

// Register adds every implemented built-in node type to r.
func Register(r *runtime.Registry, o Options) error {
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
