package workspace

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"

	"github.com/sandgate/sandgate/blueprint"
	"github.com/sandgate/sandgate/runtime"
	"github.com/sandgate/sandgate/sandbox"
	"github.com/sandgate/sandgate/sandbox/image"
	"github.com/sandgate/sandgate/secrets"
)

// Options configure the environment the built-in nodes work in (the
// nodes facade's EnvOptions).
type Options struct {
	// Repo is the user's repository; it is only read.
	Repo string
	// Rev is the commit to work on (default HEAD).
	Rev string
	// CacheDir holds shared per-commit snapshots (default
	// $XDG_CACHE_HOME/sandgate or ~/.cache/sandgate).
	CacheDir string
	// AllowUnconfined lets blueprints with sandbox.isolation: none run.
	AllowUnconfined bool
	// AllowEnv lists the credentials the operator lets into the box
	// through sandbox.env (the CLI's --allow-env); any other credential
	// there stops the run before the box starts. Load the blueprint with
	// the same names (nodes.Options.AllowEnv): nodes.Config's one AllowEnv
	// sets both, so the two lists cannot differ.
	AllowEnv []string
	// AllowEndpoints are the operator's URL prefixes credentials may go
	// to (--allow-endpoint): where the environment revokes the tokens the
	// run minted (nodes.Environment) when the run ends or is resumed.
	AllowEndpoints []string
	// OnAlert receives the egress proxy's alerts.
	OnAlert func(sandbox.Alert)
	// PermitAddrs exempts address ranges from the egress proxy's block on
	// special-purpose addresses (sandbox.Proxy.PermitAddrs): an internal
	// mirror or MCP server on a private network.
	PermitAddrs []netip.Prefix
	// Limits override the sandbox's default limits.
	Limits sandbox.Limits
	// ReadOnly lists extra host paths visible read-only in the box.
	ReadOnly []string
	// Caches are host caches shown copy-on-write in the box (see GoCaches).
	Caches []sandbox.Cache
	// ColdBuilds turns warm builds off: with a Go build cache among
	// Caches, each run otherwise warms a build cache of the repository's
	// own, once per base commit, beneath the user's (see warm.go).
	ColdBuilds bool
	// WarmMaxBytes is the size at which a repository's warm build cache
	// is emptied and refilled (WarmMaxBytes when zero).
	WarmMaxBytes int64
	// MaxChangeBytes caps the bytes a change may hold: every added or
	// modified file at its apparent size (sparse files count in full)
	// plus link targets. Promotion fails beyond it, naming the biggest
	// paths. Zero means DefaultMaxChangeBytes.
	MaxChangeBytes int64
}

// Open is the first half of preparing a run's environment: it refuses a
// blueprint that would pass a credential into the box the operator did
// not allow, and on resume a run whose box state is gone, and returns the
// workspace, not yet started (see Boot).
func Open(ctx context.Context, o Options, runDir string, bp *blueprint.Blueprint, resume bool) (*Workspace, error) {
	cache := o.CacheDir
	if cache == "" {
		cache = sandbox.DefaultCacheDir()
	}
	rev := o.Rev
	if rev == "" {
		rev = "HEAD"
	}
	if bad := bp.BoxedCredentials(o.AllowEnv); len(bad) > 0 {
		name := bp.Sandbox.Env[bad[0]]
		return nil, fmt.Errorf("sandbox.env[%d]: %s is a credential; the harness does not pass credentials into the box unless the operator allows it (--allow-env %s)", bad[0], name, name)
	}
	redact := secrets.FromContext(ctx)
	if redact == nil {
		redact = secrets.FromOS(bp.Credentials...)
	}
	w := &Workspace{Repo: o.Repo, RunDir: runDir, RunID: filepath.Base(runDir), redact: redact, MaxChangeBytes: o.MaxChangeBytes, cacheDir: cache, rev: rev}
	if resume {
		// Continuing on a fresh, empty box would silently drop the
		// run's change; every resumable run has its box state.
		if _, err := os.Stat(filepath.Join(runDir, "box")); err != nil {
			return nil, fmt.Errorf("%s: the run's workspace state (box/, its disk image) is gone, so the run cannot continue where it stopped: %w", runDir, err)
		}
		if b, err := os.ReadFile(filepath.Join(runDir, "base")); err == nil {
			w.rev = string(b)
		}
	}
	return w, nil
}

// Boot is the second half: it leases the snapshot of the commit to work
// on (the lease keeps it from eviction while the run lives; Close
// releases it, and so does a crash), lets check refuse the snapshot
// before anything runs, and starts the box (and the egress proxy when the
// blueprint allowlists hosts). The environment's services hold the
// workspace (Service); the caller adds its own.
func (w *Workspace) Boot(ctx context.Context, o Options, bp *blueprint.Blueprint, check func(snapshot string) error) (*runtime.Environment, error) {
	img, err := w.leaseImage(ctx, bp)
	if err != nil {
		return nil, err
	}
	runtime.Notef(ctx, "snapshot of %s (taken once per commit, then shared)", w.rev)
	lease, err := sandbox.LeaseSnapshot(ctx, o.Repo, w.rev, w.cacheDir)
	if err != nil {
		img.Release()
		return nil, err
	}
	env, err := w.start(ctx, o, bp, lease, check)
	if err != nil {
		lease.Release()
		img.Release()
		w.image = nil
	}
	return env, err
}

// leaseImage leases the blueprint's sandbox.image, unpacked in the
// cache, when it names one. It fails rather than leave the box on the
// host's root.
func (w *Workspace) leaseImage(ctx context.Context, bp *blueprint.Blueprint) (*sandbox.ImageLease, error) {
	if bp.Sandbox.Image == "" {
		return nil, nil
	}
	runtime.Notef(ctx, "image %s (verified and unpacked once, then shared)", bp.Sandbox.Image)
	img, err := image.Lease(ctx, w.cacheDir, bp.Sandbox.Image, image.Limits{})
	if err != nil {
		pos := bp.Sandbox.ImagePos
		return nil, fmt.Errorf("%s:%d:%d: %w (the box does not fall back to the host's root)", bp.File, pos.Line, pos.Col, err)
	}
	w.image, w.imageRef = img, bp.Sandbox.Image
	return img, nil
}

// Image is the sandbox.image the box's root comes from, "" when the box
// sees the host's root: what the parity node names as "the sandbox".
func (w *Workspace) Image() string {
	if w.image == nil {
		return ""
	}
	return w.imageRef
}

// start builds the run's box over a leased snapshot.
func (w *Workspace) start(ctx context.Context, o Options, bp *blueprint.Blueprint, lease *sandbox.SnapshotLease, check func(string) error) (*runtime.Environment, error) {
	snap, commit, runDir, redact := lease.Dir, lease.Commit, w.RunDir, w.redact
	w.Snapshot, w.Base = snap, commit
	if err := check(snap); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(runDir, "base"), []byte(commit), 0o644); err != nil {
		return nil, err
	}
	policy := SandboxPolicy(bp.Sandbox)
	disk := policy.Limits.DiskBytes // the blueprint's sandbox.disk
	policy.Limits, policy.ReadOnly = o.Limits, o.ReadOnly
	policy.Caches = w.warmCaches(ctx, o, bp, o.Caches)
	if w.image != nil {
		policy.RootFS, policy.RootEnv = w.image.RootFS, w.image.Env
	}
	if policy.Limits.DiskBytes == 0 {
		policy.Limits.DiskBytes = disk
	}
	audit, err := os.OpenFile(filepath.Join(runDir, "commands.jsonl"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	bo := sandbox.Options{Policy: policy, Snapshot: snap, StateDir: filepath.Join(runDir, "box"),
		Audit: redact.Writer(audit), AllowUnconfined: o.AllowUnconfined}
	stopProxy := func() error { return nil }
	if policy.Network == sandbox.NetworkAllowlist {
		bo.ProxySocket, stopProxy, err = startProxy(runDir, policy, o, redact)
		if err != nil {
			audit.Close()
			return nil, err
		}
	}
	runtime.Notef(ctx, "starting the box on %.12s", commit)
	box, err := sandbox.Start(ctx, bo)
	if err != nil {
		audit.Close()
		_ = stopProxy()
		return nil, err
	}
	w.Box, w.boxOpts, w.proxySocket = box, bo, bo.ProxySocket
	var services runtime.Services
	Service.Set(&services, w)
	return &runtime.Environment{
		Workspace: o.Repo,
		Services:  services,
		Layers:    box.Layers(),
		Diff:      w.Diff,
		Patch:     w.Patch,
		Apply:     w.Apply,
		Close: func() error {
			return errors.Join(w.closePromotion(), box.Close(), audit.Close(), stopProxy(), lease.Release(), w.image.Release())
		},
		// Close has stopped the box; the runtime discards it only when the
		// run can neither resume nor be answered.
		Discard: box.Discard,
	}, nil
}

// startProxy starts the egress proxy for an allowlist box. stop closes
// the proxy (waiting for its connections), then its logs, and removes the
// socket's directory.
func startProxy(runDir string, p sandbox.Policy, o Options, redact *secrets.Redactor) (sock string, stop func() error, err error) {
	onAlert := o.OnAlert
	var closers []func() error
	stop = func() error {
		var errs []error
		for i := len(closers) - 1; i >= 0; i-- {
			errs = append(errs, closers[i]())
		}
		return errors.Join(errs...)
	}
	defer func() {
		if err != nil {
			_ = stop()
		}
	}()
	f, err := os.OpenFile(filepath.Join(runDir, "audit.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return "", nil, err
	}
	closers = append(closers, f.Close)
	alerts, err := os.OpenFile(filepath.Join(runDir, "alerts.jsonl"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return "", nil, err
	}
	closers = append(closers, alerts.Close)
	alertLog := redact.Writer(alerts)
	proxy := &sandbox.Proxy{Allow: p.AllowHosts, PermitAddrs: o.PermitAddrs, AuditLog: redact.Writer(f), OnAlert: func(a sandbox.Alert) {
		b, _ := json.Marshal(a)
		_, _ = alertLog.Write(append(b, '\n'))
		if onAlert != nil {
			onAlert(a)
		}
	}}
	// Unix socket paths are limited to 108 bytes; run directories can be
	// deeper than that, so the socket lives in a short private directory.
	dir, err := os.MkdirTemp("", "sg-")
	if err != nil {
		return "", nil, err
	}
	closers = append(closers, func() error { return os.RemoveAll(dir) })
	sock = filepath.Join(dir, "proxy.sock")
	if err := proxy.Listen(sock); err != nil {
		return "", nil, err
	}
	closers = append(closers, proxy.Close)
	return sock, stop, nil
}
