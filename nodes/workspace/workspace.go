package workspace

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/sandgate/sandgate/nodes/internal/gitstore"
	"github.com/sandgate/sandgate/runtime"
	"github.com/sandgate/sandgate/sandbox"
	"github.com/sandgate/sandgate/secrets"
)

// Service is the Input.Services key of the run's *Workspace.
var Service = runtime.NewServiceKey[*Workspace]("sandgate.workspace")

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
	// when zero); see Options.
	MaxChangeBytes int64

	mu    sync.Mutex
	promo *gitstore.Repo
	// redact removes the harness's credentials from what the built-in
	// nodes write outside the attempt directory (verdict, review queue).
	redact *secrets.Redactor
	// quiet keeps writers out while a gate judges (see hold.go).
	quiet quiesce
	// rev is the commit the box is built from, until Boot resolves it.
	rev string
	// boxOpts rebuild a box like Box, for held-out tests.
	boxOpts sandbox.Options
	// cacheDir holds the shared snapshots (Options.CacheDir), for
	// boxes built from another commit (clean-checkout ci).
	cacheDir string
	// image is the leased sandbox.image the boxes take as their root,
	// when the blueprint names one.
	image *sandbox.ImageLease
	// imageRef is the blueprint's sandbox.image the lease is of.
	imageRef string
	// proxySocket is the egress proxy's socket, when the box has one.
	proxySocket string
	// lastPatch is the latest diff text and the tree it was taken to.
	lastPatch struct {
		tree plumbing.Hash
		text string
	}
}

// Of fetches the run's workspace from a node's input.
func Of(in *runtime.Input) (*Workspace, error) {
	w, ok := Service.Get(in)
	if !ok || w == nil {
		return nil, errors.New("no sandboxed workspace: the runtime was built without nodes.Environment, and built-in nodes never run unconfined")
	}
	return w, nil
}

// Changes lists what the run changed against the base commit.
func (w *Workspace) Changes() ([]sandbox.Change, error) {
	return sandbox.Changes(w.Snapshot, w.Box.Upper(), w.Box.Merged())
}

// Fingerprint fingerprints the change as it is now (see FingerprintOf).
func (w *Workspace) Fingerprint() (string, error) {
	changes, err := w.Changes()
	if err != nil {
		return "", err
	}
	return w.FingerprintOf(changes)
}

// FingerprintOf identifies a change, so a verdict can be tied to exactly
// the content it judged. Content is streamed, never held; reading it
// pins each file (see sandbox.Change.Open), so a promotion that reads
// the same changes again fails rather than commit other bytes.
//
// A change over the size cap is not read at all (a sparse file can claim
// terabytes): its fingerprint binds names and sizes only, in a separate
// domain, and no promotion accepts such a change. The toolchain's
// bookkeeping (ToolchainFiles) never leaves the run and is left out.
func (w *Workspace) FingerprintOf(changes []sandbox.Change) (string, error) {
	skip, err := w.ToolchainFiles(changes)
	if err != nil {
		return "", err
	}
	h := sha256.New()
	over := ChangeBytes(changes) > w.ChangeCap()
	if over {
		h.Write([]byte("oversize\x00"))
	} else {
		h.Write([]byte("content\x00"))
	}
	for _, c := range changes {
		if skip[c.Path] {
			continue
		}
		fmt.Fprintf(h, "%s\x00%v\x00%o\x00%s\x00%d\x00", c.Path, c.Deleted, c.Mode, c.Link, c.Size)
		if over || c.Deleted {
			continue
		}
		if err := gitstore.CopyContent(h, c); err != nil {
			return "", err
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// Redactor removes the harness's credentials from what the built-in
// nodes write outside the attempt directory (verdict, commit record,
// review queue).
func (w *Workspace) Redactor() *secrets.Redactor { return w.redact }

// BoxOptions are the options the run's box was started with, to start
// another box like it (held-out tests, clean-checkout CI); ok is false
// for a workspace Boot did not start.
func (w *Workspace) BoxOptions() (o sandbox.Options, ok bool) {
	return w.boxOpts, w.boxOpts.StateDir != ""
}

// CacheDir holds the shared per-commit snapshots.
func (w *Workspace) CacheDir() string { return w.cacheDir }

// ProxySocket is the egress proxy's socket, "" when the box has none.
func (w *Workspace) ProxySocket() string { return w.proxySocket }
