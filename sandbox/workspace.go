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
	return leaseOrBuild(cacheDir, commit, func(root string) error {
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
	baseCommit := filepath.Base(base)
	if filepath.Clean(base) != filepath.Join(root, baseCommit) || !commitName.MatchString(baseCommit) {
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
	return leaseOrBuild(cacheDir, resolved, func(root string) error {
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
func leaseOrBuild(cacheDir, commit string, make func(root string) error) (*SnapshotLease, error) {
	root := filepath.Join(cacheDir, "snapshots")
	if err := os.MkdirAll(root, 0o755); err != nil {
		return nil, err
	}
	l, err := lease(root, commit)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(l.Dir); err == nil {
		return l, nil
	}
	if err := make(root); err != nil {
		l.Release()
		return nil, err
	}
	// A new snapshot may push the cache over its cap; this one is leased
	// and survives. Eviction failing must not fail the run.
	_, _ = EvictSnapshots(cacheDir, CacheMax())
	return l, nil
}

// onBase builds the snapshot on the cached snapshot of baseCommit, held
// by a lease meanwhile, or afresh when there is none or building on it
// fails (its files are then left as they were).
func (b *build) onBase(ctx context.Context, baseCommit string) error {
	if baseCommit != "" {
		bl, err := lease(b.root, baseCommit)
		if err == nil {
			defer bl.Release()
			if _, serr := os.Stat(bl.Dir); serr == nil {
				err = b.run(ctx, bl.Dir, baseCommit)
				if err != nil {
				}
				var r refused
				if err == nil || ctx.Err() != nil || errors.As(err, &r) {
					return err
				}
			}
		}
	}
	return b.run(ctx, "", "")
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
}

func readSnapshotMeta(root, commit string) (snapshotMeta, error) {
	var m snapshotMeta
	b, err := os.ReadFile(filepath.Join(root, commit+".json"))
	if err != nil {
		return m, err
	}
	return m, json.Unmarshal(b, &m)
}
