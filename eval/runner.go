package eval

import (
	"context"

	"github.com/sandgate/sandgate/nodes"
	"github.com/sandgate/sandgate/runtime"
)

// DefaultRunOptions configure DefaultRun.
type DefaultRunOptions struct {
	// Config is every run's runtime configuration (nodes.NewRuntime), the
	// way `sandgate run` builds it from its flags; each task's run sets
	// its repository, commit, record directories and, when the task names
	// one, model.
	Config nodes.Config
	// AllowUnsandboxed and CacheDir set Config's fields of those names
	// when true or non-empty.
	AllowUnsandboxed bool
	CacheDir         string
}

// DefaultRun runs a task with the built-in node types, the way
// `sandgate run` does, without its printing.
func DefaultRun(o DefaultRunOptions) RunFunc {
	return func(ctx context.Context, req RunRequest) (*runtime.Summary, error) {
		c := o.Config
		c.Repo, c.Rev, c.RunsDir, c.ReviewDir = req.Repo, req.Rev, req.RunsDir, req.ReviewDir
		if req.Model != "" {
			c.Agent.Model = req.Model
		}
		if o.AllowUnsandboxed {
			c.AllowUnconfined = true
		}
		if o.CacheDir != "" {
			c.CacheDir = o.CacheDir
		}
		rt := nodes.NewRuntime(c)
		bp, err := rt.Registry.Parse(req.File, req.Source)
		if err != nil {
			return nil, err
		}
		return rt.Run(ctx, bp, runtime.RunOptions{Inputs: req.Inputs, Workspace: req.Repo})
	}
}
