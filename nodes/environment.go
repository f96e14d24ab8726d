package nodes

import (
	"context"
	"errors"
	"path/filepath"

	"github.com/sandgate/sandgate/blueprint"
	"github.com/sandgate/sandgate/nodes/agent"
	"github.com/sandgate/sandgate/nodes/internal/alert"
	"github.com/sandgate/sandgate/nodes/internal/credential"
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
func Environment(o EnvOptions) runtime.Prepare { return EnvironmentAlerting(o, nil) }

// EnvironmentAlerting is Environment whose runs also send their alerts to
// sinks (see AlertSink): the proxy's, tokens minted and revoked, pushes
// and reviews to a repository other than the run's, canary hits.
func EnvironmentAlerting(o EnvOptions, sinks []AlertSink) runtime.Prepare {
	return func(ctx context.Context, runDir string, bp *blueprint.Blueprint, resume bool) (_ *runtime.Environment, err error) {
		if err := CheckKeyFiles(bp, o, filepath.Dir(runDir)); err != nil {
			return nil, err
		}
		w, err := workspace.Open(ctx, o, runDir, bp, resume)
		if err != nil {
			return nil, err
		}
		alerts, o, err := openAlerts(ctx, o, sinks, runDir, w.Redactor(), resume)
		if err != nil {
			return nil, err
		}
		defer func() {
			if err != nil {
				_ = alerts.Close()
			}
		}()
		ledger := credential.NewLedger(runDir)
		if alerts != nil {
			// Every token minted, revoked or not revoked reaches the
			// sinks, also through the sweeps below.
			ledger.Notify = credentialNotify(alerts)
		}
		if resume {
			// The harness that minted them is gone: take its tokens back
			// before the box starts. What fails stays in the ledger for
			// the run's end, and GitHub expires it within the hour.
			if err := ledger.Sweep(ctx, o.AllowEndpoints); err != nil {
				runtime.Notef(ctx, "revoking the tokens the interrupted harness minted: %v", err)
			}
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
		credential.ServiceLedger.Set(&env.Services, ledger)
		alert.Service.Set(&env.Services, alerts)
		closeEnv := env.Close
		env.Close = func() error {
			// The kill switch: every token the run still holds dies
			// with it, before the box is torn down. The alerts go last,
			// after the proxy's, within their own bound.
			revoked := ledger.Sweep(context.WithoutCancel(ctx), o.AllowEndpoints)
			return errors.Join(revoked, closeEnv(), alerts.Close())
		}
		promote.ServicePushes.Set(&env.Services, promote.NewPushes(runDir))
		// A run moved to another host takes its verdicts, commit and push
		// records along with its change (temporal/move.go).
		env.Records = func() ([]byte, error) { return promote.TakeRecords(runDir) }
		env.Restore = func(records []byte) error {
			if err := promote.PutRecords(runDir, records); err != nil {
				return err
			}
			return verdicts.Reload()
		}
		agent.ServiceExecutor.Set(&env.Services, w.Executor())
		if sock := w.ProxySocket(); sock != "" {
			agent.ServiceProxy.Set(&env.Services, sock)
		}
		return env, nil
	}
}

// CheckKeyFiles refuses a blueprint whose GitHub App private key
// (credentials: github_app: key_file) lies where an agent can read or
// write: in the repository o.Repo, the runs directory runsDir, or a cache
// the box is shown (o.Caches). The error is positioned at the key_file.
func CheckKeyFiles(bp *blueprint.Blueprint, o EnvOptions, runsDir string) error {
	places := []credential.Place{{What: "the repository", Dir: o.Repo}, {What: "the runs directory", Dir: runsDir}}
	for _, c := range o.Caches {
		for _, d := range append([]string{c.Host}, c.Lower...) {
			places = append(places, credential.Place{What: "a cache the box sees", Dir: d})
		}
	}
	return credential.CheckKeyPlaces(bp, places)
}

// RevokeTokens revokes every token the run in runDir minted and has not
// taken back (an interrupted harness's), through the run's credential
// ledger; allowEndpoints are the operator's --allow-endpoint prefixes.
// Pruning calls it before a run's directory, and the ledger with it, goes.
func RevokeTokens(ctx context.Context, runDir string, allowEndpoints []string) error {
	return credential.Sweep(ctx, runDir, allowEndpoints)
}
