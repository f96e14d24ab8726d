package nodes

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/sandgate/sandgate/blueprint"
	"github.com/sandgate/sandgate/nodes/agent"
	"github.com/sandgate/sandgate/runtime"
	"github.com/sandgate/sandgate/sandbox"
	"github.com/sandgate/sandgate/secrets"
)

// ServiceWorkspace is the Input.Services key of the run's *Workspace.
var ServiceWorkspace = runtime.NewServiceKey[*Workspace]("sandgate.workspace")

// Workspace is a run's sandboxed copy of the repository, shared by the
// built-in nodes: commands run in Box, the harness reads changes from the
// overlay, and promotion builds commits outside the box.
type Workspace struct {
	Box      *sandbox.Box
	Repo     string
	Base     string
	Snapshot string
	RunDir   string
	RunID    string
	// MaxChangeBytes caps what a change may hold (DefaultMaxChangeBytes
	// when zero); see EnvOptions.
	MaxChangeBytes int64

	mu      sync.Mutex
	verdict Verdict
	promo   *promotion
	// redact removes the harness's credentials from what the built-in
	// nodes write outside the attempt directory (verdict, review queue).
	redact *secrets.Redactor
	// quiet keeps writers out while a gate judges (see quiesce.go).
	quiet quiesce
	// required are the gate nodes promotion waits for.
	required []string
	// boxOpts rebuild a box like Box, for held-out tests.
	boxOpts sandbox.Options
	// cacheDir holds the shared snapshots (EnvOptions.CacheDir), for
	// boxes built from another commit (clean-checkout ci).
	cacheDir string
	// pushed are the branches git_push made.
	pushed []notedPush
	// lastPatch is the latest diff text and the tree it was taken to.
	lastPatch struct {
		tree plumbing.Hash
		text string
	}
}

// Exec runs a shell command line in the box (see Command).
func (w *Workspace) Exec(ctx context.Context, script string, timeout time.Duration) (*sandbox.Result, error) {
	return w.Command(ctx, sandbox.Command{Args: []string{"sh", "-c", script}, Timeout: timeout})
}

// Changes lists what the run changed against the base commit.
func (w *Workspace) Changes() ([]sandbox.Change, error) {
	return sandbox.Changes(w.Snapshot, w.Box.Upper(), w.Box.Merged())
}

// fingerprint identifies the current change, so a verdict can be tied to
// exactly the content it judged. Content is streamed, never held; reading
// it pins each file (see sandbox.Change.Open), so a promotion that reads
// the same changes again fails rather than commit other bytes.
//
// A change over the size cap is not read at all (a sparse file can claim
// terabytes): its fingerprint binds names and sizes only, in a separate
// domain, and no promotion accepts such a change.
func (w *Workspace) fingerprint(changes []sandbox.Change) (string, error) {
	h := sha256.New()
	over := changeBytes(changes) > w.maxChangeBytes()
	if over {
		h.Write([]byte("oversize\x00"))
	} else {
		h.Write([]byte("content\x00"))
	}
	for _, c := range changes {
		fmt.Fprintf(h, "%s\x00%v\x00%o\x00%s\x00%d\x00", c.Path, c.Deleted, c.Mode, c.Link, c.Size)
		if over || c.Deleted {
			continue
		}
		if err := copyContent(h, c); err != nil {
			return "", err
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// copyContent streams one change's content into dst.
func copyContent(dst io.Writer, c sandbox.Change) error {
	r, err := c.Open()
	if err != nil {
		return err
	}
	defer r.Close()
	_, err = io.Copy(dst, r)
	return err
}

// workspaceOf fetches the run's workspace from a node's input.
func workspaceOf(in *runtime.Input) (*Workspace, error) {
	w, ok := ServiceWorkspace.Get(in)
	if !ok || w == nil {
		return nil, errors.New("no sandboxed workspace: the runtime was built without nodes.Environment, and built-in nodes never run unconfined")
	}
	return w, nil
}

// EnvOptions configure the environment the built-in nodes work in.
type EnvOptions struct {
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
	// the same names (nodes.Options.AllowEnv).
	//
	// Deprecated: set Config.AllowEnv and take Options and EnvOptions from
	// the one Config (or use NewRuntime), so the two lists cannot differ.
	AllowEnv []string
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
	// MaxChangeBytes caps the bytes a change may hold: every added or
	// modified file at its apparent size (sparse files count in full)
	// plus link targets. Promotion fails beyond it, naming the biggest
	// paths. Zero means DefaultMaxChangeBytes.
	MaxChangeBytes int64
}

// GoCaches returns the host's Go build and module caches as copy-on-write
// caches for the box, so builds in the box start warm without being able
// to poison the host's caches.
func GoCaches() []sandbox.Cache {
	var out []sandbox.Cache
	for env, box := range map[string]string{"GOCACHE": sandbox.HomeDir + "/.cache/go-build", "GOMODCACHE": sandbox.HomeDir + "/go/pkg/mod"} {
		b, err := exec.Command("go", "env", env).Output()
		if p := strings.TrimSpace(string(b)); err == nil && p != "" && p != "off" {
			out = append(out, sandbox.Cache{Host: p, Box: box, Env: env})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Env < out[j].Env })
	return out
}

// Environment returns a runtime.Prepare hook that gives each run a
// sandboxed copy-on-write workspace of Repo, an egress proxy when the
// blueprint allowlists hosts, and the services built-in nodes use.
func Environment(o EnvOptions) runtime.Prepare {
	return func(ctx context.Context, runDir string, bp *blueprint.Blueprint, resume bool) (*runtime.Environment, error) {
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
		ws := &Workspace{Repo: o.Repo, RunDir: runDir, RunID: filepath.Base(runDir), redact: redact, MaxChangeBytes: o.MaxChangeBytes, cacheDir: cache}
		if resume {
			// Continuing on a fresh, empty box would silently drop the
			// run's change; every resumable run has its box state.
			if _, err := os.Stat(filepath.Join(runDir, "box")); err != nil {
				return nil, fmt.Errorf("%s: the run's workspace state (box/, its disk image) is gone, so the run cannot continue where it stopped: %w", runDir, err)
			}
			if b, err := os.ReadFile(filepath.Join(runDir, "base")); err == nil {
				rev = string(b)
			}
			// The gates' verdicts so far, so a promotion node cut off by
			// the crash (a review waiting for people) can run again. Each
			// stays tied to the change it judged by its fingerprint, and
			// the run directory is the harness's, outside the box.
			if b, err := os.ReadFile(filepath.Join(runDir, "verify.json")); err == nil {
				var v Verdict
				if err := json.Unmarshal(b, &v); err != nil {
					return nil, fmt.Errorf("%s: %w", filepath.Join(runDir, "verify.json"), err)
				}
				ws.verdict.Gates = v.Gates
			}
		}
		// The lease keeps the shared snapshot from eviction while the run
		// lives; Close releases it (a crash releases it too).
		runtime.Notef(ctx, "snapshot of %s (taken once per commit, then shared)", rev)
		lease, err := sandbox.LeaseSnapshot(ctx, o.Repo, rev, cache)
		if err != nil {
			return nil, err
		}
		env, err := o.start(ctx, runDir, bp, ws, lease, redact)
		if err != nil {
			lease.Release()
		}
		return env, err
	}
}

// start builds the run's box over a leased snapshot.
func (o EnvOptions) start(ctx context.Context, runDir string, bp *blueprint.Blueprint, ws *Workspace, lease *sandbox.SnapshotLease, redact *secrets.Redactor) (*runtime.Environment, error) {
	snap, commit := lease.Dir, lease.Commit
	ws.Snapshot, ws.Base, ws.required = snap, commit, requiredGates(bp)
	if err := checkHidden(bp, snap); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(runDir, "base"), []byte(commit), 0o644); err != nil {
		return nil, err
	}
	policy := SandboxPolicy(bp.Sandbox)
	disk := policy.Limits.DiskBytes // the blueprint's sandbox.disk
	policy.Limits, policy.ReadOnly, policy.Caches = o.Limits, o.ReadOnly, o.Caches
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
	ws.Box, ws.boxOpts = box, bo
	var services runtime.Services
	ServiceWorkspace.Set(&services, ws)
	agent.ServiceExecutor.Set(&services, executor{ws})
	if bo.ProxySocket != "" {
		agent.ServiceProxy.Set(&services, bo.ProxySocket)
	}
	return &runtime.Environment{
		Workspace: o.Repo,
		Services:  services,
		Layers:    box.Layers(),
		Diff:      ws.Diff,
		Patch:     ws.Patch,
		Close: func() error {
			return errors.Join(ws.closePromotion(), box.Close(), audit.Close(), stopProxy(), lease.Release())
		},
		// Close has stopped the box; the runtime discards it only when the
		// run can neither resume nor be answered.
		Discard: box.Discard,
	}, nil
}

// startProxy starts the egress proxy for an allowlist box. stop closes
// the proxy (waiting for its connections), then its logs, and removes the
// socket's directory.
func startProxy(runDir string, p sandbox.Policy, o EnvOptions, redact *secrets.Redactor) (sock string, stop func() error, err error) {
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
