package eval

import (
	"context"

	"github.com/sandgate/sandgate/nodes"
	"github.com/sandgate/sandgate/nodes/agent"
	"github.com/sandgate/sandgate/runtime"
)

// DefaultRunOptions configure DefaultRun.
type DefaultRunOptions struct {
	AllowUnsandboxed bool
	// CacheDir holds the shared per-commit snapshots (default: the
	// sandbox's).
	CacheDir string
}

// DefaultRun runs a task with the built-in node types, the way
// `sandgate run` does, without its printing.
func DefaultRun(o DefaultRunOptions) RunFunc {
	return func(ctx context.Context, req RunRequest) (*runtime.Summary, error) {
		reg := nodes.NewRegistryWith(nodes.Options{Agent: agent.Options{Model: req.Model}, ReviewDir: req.ReviewDir})
		bp, err := reg.Parse(req.File, req.Source)
		if err != nil {
			return nil, err
		}
		rt := &runtime.Runtime{Registry: reg, RunsDir: req.RunsDir,
			Prepare: nodes.Environment(nodes.EnvOptions{Repo: req.Repo, Rev: req.Rev, CacheDir: o.CacheDir,
				AllowUnconfined: o.AllowUnsandboxed, Caches: nodes.GoCaches()})}
		return rt.Run(ctx, bp, runtime.RunOptions{Inputs: req.Inputs, Workspace: req.Repo})
	}
}
