package nodes

import (
	"context"

	"github.com/sandgate/sandgate/blueprint"
	"github.com/sandgate/sandgate/nodes/agent"
	"github.com/sandgate/sandgate/nodes/internal/gate"
	"github.com/sandgate/sandgate/nodes/internal/promote"
	"github.com/sandgate/sandgate/nodes/internal/testgate"
	"github.com/sandgate/sandgate/nodes/workspace"
	"github.com/sandgate/sandgate/runtime"
	"github.com/sandgate/sandgate/sandbox"
)

// Workspace is the run's sandboxed workspace (workspace.Workspace).
type Workspace = workspace.Workspace

// EnvOptions configure the environment the built-in nodes work in
// (workspace.Options).
type EnvOptions = workspace.Options

// ServiceWorkspace is the Input.Services key of the run's *Workspace.
var ServiceWorkspace = workspace.Service

// DefaultMaxChangeBytes is the default cap on what a change may hold.
const DefaultMaxChangeBytes = workspace.DefaultMaxChangeBytes

// GoCaches returns the host's Go build and module caches as copy-on-write
// caches for the box (see workspace.GoCaches).
func GoCaches() []sandbox.Cache { return workspace.GoCaches() }

// SandboxPolicy turns a blueprint's sandbox section into a box policy
// (see workspace.SandboxPolicy).
func SandboxPolicy(s blueprint.Sandbox) sandbox.Policy { return workspace.SandboxPolicy(s) }

// Environment returns a runtime.Prepare hook that gives each run a
// sandboxed copy-on-write workspace of Repo, an egress proxy when the
// blueprint allowlists hosts, and the services built-in nodes use: the
// workspace, the run's verdict and push ledgers, and the box as agent
// nodes run their tools in it.
func Environment(o EnvOptions) runtime.Prepare {
	return func(ctx context.Context, runDir string, bp *blueprint.Blueprint, resume bool) (*runtime.Environment, error) {
		w, err := workspace.Open(ctx, o, runDir, bp, resume)
		if err != nil {
			return nil, err
		}
		verdicts, err := gate.NewLedger(runDir, w.Redactor(), bp, resume)
		if err != nil {
			return nil, err
		}
		env, err := w.Boot(ctx, o, bp, func(snapshot string) error { return testgate.CheckHidden(bp, snapshot) })
		if err != nil {
			return nil, err
		}
		gate.ServiceLedger.Set(&env.Services, verdicts)
		promote.ServicePushes.Set(&env.Services, promote.NewPushes(runDir))
		agent.ServiceExecutor.Set(&env.Services, w.Executor())
		if sock := w.ProxySocket(); sock != "" {
			agent.ServiceProxy.Set(&env.Services, sock)
		}
		return env, nil
	}
}
