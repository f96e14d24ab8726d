package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// Snapshot returns a read-only checkout of repo at rev from the shared
// cache under cacheDir (see LeaseSnapshot), without holding a lease: the
// snapshot may be evicted once the cache is over its cap. Runs use
// LeaseSnapshot.
func Snapshot(ctx context.Context, repo, rev, cacheDir string) (dir, commit string, err error) {
	l, err := LeaseSnapshot(ctx, repo, rev, cacheDir)
	if err != nil {
		return "", "", err
	}
	l.view = "" // the view (of a layered snapshot) stays mounted
	return l.Dir, l.Commit, l.Release()
}

// LeaseSnapshot returns a read-only checkout of repo at rev, cached per
// commit under cacheDir/snapshots/<commit> and shared by every run and
// every clone of the same commit, and holds a lease on it until Release
// (or until the process ends): eviction never removes a leased snapshot.
//
// The snapshot's .git borrows its objects from the repository's object
// store in the cache (cacheDir/stores; see objstore.go), which the
// harness owns: nothing is hard-linked into the user's .git (the box
// hands the snapshot over to the commands' uid, which on a hard link
// would re-own the user's files), and nothing runs in the user's
// repository but git rev-parse with its config's programs disabled. The
// first snapshot of a repository copies its packs (what a local clone
// costs); a snapshot of a new commit imports only the new objects and
// links the files that did not change from the nearest cached snapshot,
// so it costs what changed. The history stays because promotion pushes
// from a repository that borrows these objects, and a push to an empty
// remote needs every ancestor of the base.
func LeaseSnapshot(ctx context.Context, repo, rev, cacheDir string) (*SnapshotLease, error) {
	commit, src, err := inspectSource(ctx, repo, rev, cacheDir)
	if err != nil {
		return nil, err
	}
	return leaseOrBuild(cacheDir, commit, false, func(root string) error {
		st, err := openStore(ctx, cacheDir, storeKey(src.common), src.common, src.format)
		if err != nil {
			return err
		}
		defer st.close()
		if err := st.ensure(ctx, src, commit); err != nil {
			return fmt.Errorf("snapshot %s: %w", src.repo, err)
		}
		b := &build{st: st, src: src, format: src.format, commit: commit, root: root}
		return b.onBase(ctx, b.pickBase(ctx))
	})
}

// LeaseDerivedSnapshot leases a snapshot of commit, which repo holds and
// which builds on the snapshot base (the Dir of a lease from this cache,
// typically the run's own): clean-checkout CI's box for a commit the run
// made. repo is a repository the harness wrote, such as the run's
// promotion repository, which borrows base's objects through its
// alternates. Only the objects base's store lacks are imported, and the
// checkout links base's unchanged files: it costs the change, not the
// history. A base from before object stores falls back to LeaseSnapshot.
func LeaseDerivedSnapshot(ctx context.Context, cacheDir, base, repo, commit string) (*SnapshotLease, error) {
	root := filepath.Join(cacheDir, "snapshots")
	baseCommit := snapshotCommit(root, base)
	if baseCommit == "" {
		return nil, fmt.Errorf("derived snapshot: %s is not a snapshot in %s", base, root)
	}
	m, err := readSnapshotMeta(root, baseCommit)
	if err != nil || m.Store == "" {
		return LeaseSnapshot(ctx, repo, commit, cacheDir)
	}
	resolved, src, err := inspectSource(ctx, repo, commit, cacheDir)
	if err != nil {
		return nil, err
	}
	return leaseOrBuild(cacheDir, resolved, false, func(root string) error {
		st, err := openStore(ctx, cacheDir, m.Store, src.common, src.format)
		if err != nil {
			return err
		}
		defer st.close()
		if err := st.ensure(ctx, src, resolved, baseCommit); err != nil {
			return fmt.Errorf("snapshot %s: %w", src.repo, err)
		}
		b := &build{st: st, src: src, format: src.format, commit: resolved, root: root}
		return b.onBase(ctx, baseCommit)
	})
}

// leaseOrBuild leases the snapshot of commit, building it first (with
// make) when the cache has none, then trims the cache to its cap.
func leaseOrBuild(cacheDir, commit string, rebuilt bool, make func(root string) error) (*SnapshotLease, error) {
	root := filepath.Join(cacheDir, "snapshots")
	if err := os.MkdirAll(root, 0o755); err != nil {
		return nil, err
	}
	l, err := lease(root, commit)
	if err != nil {
		return nil, err
	}
	built, err := buildOnce(root, commit, make)
	if err != nil {
		l.Release()
		return nil, err
	}
	if err := l.attach(root); err != nil {
		l.Release()
		// A layer whose base is gone is removed (unless leased) and
		// built again, once.
		if errors.Is(err, errLayerGone) && !rebuilt {
			if ok, _ := RemoveSnapshot(describe(root, commit)); ok {
				return leaseOrBuild(cacheDir, commit, true, make)
			}
		}
		return nil, err
	}
	// A new snapshot may push the cache over its cap; this one is leased
	// and survives. A snapshot that was there added nothing.
	if built {
		evictAfterBuild(cacheDir, builtBytes(cacheDir, root, commit))
	}
	return l, nil
}

// buildOnce builds root/<commit> with make unless it is there, one
// build of a commit at a time (root/<commit>.build is its lock); built
// says whether this call built it.
func buildOnce(root, commit string, make func(root string) error) (built bool, err error) {
	dir := filepath.Join(root, commit)
	if _, err := os.Stat(dir); err == nil {
		return false, nil
	}
	f, err := os.OpenFile(filepath.Join(root, commit+".build"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return false, err
	}
	defer f.Close()
	if err := flock(f, lockEX); err != nil {
		return false, err
	}
	if _, err := os.Stat(dir); err == nil {
		return false, nil // built meanwhile
	}
	return true, make(root)
}

// onBase builds the snapshot on the cached snapshot of baseCommit, held
// by a lease meanwhile, or afresh when there is none or building on it
// fails (its files are then left as they were).
func (b *build) onBase(ctx context.Context, baseCommit string) error {
	if baseCommit != "" {
		bl, err := lease(b.root, baseCommit)
		if err == nil {
			defer bl.Release()
			err = b.onLeasedBase(ctx, bl)
			var r refused
			if err == nil || ctx.Err() != nil || errors.As(err, &r) {
				return err
			}
		}
	}
	return b.run(ctx, "", "")
}

// onLeasedBase builds on the leased snapshot bl: as a layer over its
// layers while they are fewer than maxLayers, else (or when the overlay
// is refused) flat, linked from the flat snapshot at their bottom.
func (b *build) onLeasedBase(ctx context.Context, bl *SnapshotLease) error {
	if _, err := os.Stat(bl.Dir); err != nil {
		return err
	}
	if err := bl.holdLowers(b.root); err != nil {
		return err
	}
	layers := bl.layers
	if layersSupported() && len(layers) < maxLayers && checkLayerPaths(b.root, layers) == nil {
		err := b.runLayer(ctx, bl.Commit, layers)
		var r refused
		if err == nil || ctx.Err() != nil || errors.As(err, &r) {
			return err
		}
	}
	flat := layers[len(layers)-1]
	return b.run(ctx, flat, filepath.Base(flat))
}

// refused is an error no other base would avoid (objects missing or
// corrupt, no room).
type refused struct{ error }

func (r refused) Unwrap() error { return r.error }

// snapshotMeta is written beside a snapshot as <commit>.json.
type snapshotMeta struct {
	Repo string `json:"repo"`
	// Bytes is what the snapshot added to the cache: its directories and
	// the files it does not share with its base.
	Bytes int64     `json:"bytes"`
	Built time.Time `json:"built"`
	// Store is the key of the object store it borrows from (none for a
	// snapshot from before stores: it holds its own pack).
	Store string `json:"store,omitempty"`
	// Base is the snapshot it was built on, linking its unchanged files.
	Base string `json:"base,omitempty"`
	// Lower are the snapshots whose layers a layered snapshot stacks on,
	// Base first, the flat snapshot at the bottom last; none for a flat
	// snapshot (a whole checkout).
	Lower []string `json:"lower,omitempty"`
}

func readSnapshotMeta(root, commit string) (snapshotMeta, error) {
	var m snapshotMeta
	b, err := os.ReadFile(filepath.Join(root, commit+".json"))
	if err != nil {
		return m, err
	}
	return m, json.Unmarshal(b, &m)
}
