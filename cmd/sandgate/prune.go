package main

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"strings"
	"time"

	"github.com/sandgate/sandgate/internal/termtext"
	"github.com/sandgate/sandgate/nodes"
	"github.com/sandgate/sandgate/runtime"
	"github.com/sandgate/sandgate/sandbox"
)

// pruneItem is one thing prune removes (or would).
type pruneItem struct {
	kind, name, path string
	bytes            int64
	when             time.Time
	remove           func() (bool, error)
}

type pruneOpts struct {
	runsDir, reviewsDir, cacheDir string
	olderThan                     time.Duration
	keep                          int
	dryRun                        bool
	// allowEndpoints: where the runs' minted tokens may be revoked.
	allowEndpoints listFlag
}

const pruneHelp = `[--older-than 168h] [--keep N] [--dry-run]

Removes the current repository's runs (never one a process carries on),
its decided review entries (never a pending one), and snapshots and
unpacked sandbox.images in the shared cache unused for --older-than
(never one a live run holds: those are named and kept). A run's tokens that its harness minted and did not
revoke (it was killed) are revoked first; a run whose tokens cannot be
revoked is kept.

flags:`

func cmdPrune(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("prune", pruneHelp, stdout, stderr)
	var o pruneOpts
	fs.StringVar(&o.runsDir, "runs-dir", "", "directory holding run directories (default: the current repository's, see run --help)")
	fs.StringVar(&o.reviewsDir, "reviews-dir", "", "local review queue directory (default: the current repository's, beside its runs)")
	fs.StringVar(&o.cacheDir, "cache-dir", sandbox.DefaultCacheDir(), "snapshot cache directory")
	fs.DurationVar(&o.olderThan, "older-than", 168*time.Hour, "remove only what was last used longer ago than this")
	fs.IntVar(&o.keep, "keep", 0, "always keep the N newest runs and N newest review entries")
	fs.BoolVar(&o.dryRun, "dry-run", false, "list what would be removed; remove nothing")
	fs.Var(&o.allowEndpoints, "allow-endpoint", "URL prefix (a GitHub Enterprise API) where the runs' minted tokens are revoked (repeatable; https://api.github.com needs none)")
	if _, code, ok := fs.parseN(args, 0, 0); !ok {
		return code
	}
	if o.keep < 0 || o.olderThan < 0 {
		return fs.usageError("--keep and --older-than cannot be negative")
	}
	if o.runsDir == "" {
		o.runsDir = defaultRunsDir(".")
	}
	if o.reviewsDir == "" {
		o.reviewsDir = filepath.Join(filepath.Dir(defaultRunsDir(".")), "reviews")
	}
	items, held, err := pruneCandidates(o, time.Now())
	if err != nil {
		fmt.Fprintln(stderr, "sandgate:", err)
		return exitFailed
	}
	for _, it := range held {
		fmt.Fprintf(stdout, "kept %s %s: a live run holds it (last used %s)\n", it.kind, it.name, it.when.Format("2006-01-02 15:04"))
	}
	return pruneApply(o, items, stdout, stderr)
}

// pruneCandidates lists what is old enough to go: finished or aborted
// runs (never a live one), decided review entries, unused snapshots; and
// the old snapshots live runs hold, which stay.
func pruneCandidates(o pruneOpts, now time.Time) (items, held []pruneItem, err error) {
	cutoff := now.Add(-o.olderThan)
	runs, err := pruneRuns(o.runsDir, cutoff, o.keep, o.allowEndpoints)
	if err != nil {
		return nil, nil, err
	}
	reviews, err := pruneReviews(o.reviewsDir, cutoff, o.keep, o.allowEndpoints)
	if err != nil {
		return nil, nil, err
	}
	snaps, held, err := pruneSnapshots(o.cacheDir, cutoff)
	if err != nil {
		return nil, nil, err
	}
	imgs, heldImgs, err := pruneImages(o.cacheDir, cutoff)
	if err != nil {
		return nil, nil, err
	}
	return append(append(append(runs, reviews...), snaps...), imgs...), append(held, heldImgs...), nil
}

// pruneRuns: finished or aborted runs past the cutoff, beyond the keep
// newest (runtime.OldRuns); removal skips a run resumed meanwhile.
// Before a run goes, the tokens its ledger still holds are revoked: after
// the removal nothing could revoke them.
func pruneRuns(dir string, cutoff time.Time, keep int, allowed []string) ([]pruneItem, error) {
	runs, err := runtime.OldRuns(dir, cutoff, keep)
	if err != nil {
		return nil, err
	}
	out := make([]pruneItem, len(runs))
	for i, r := range runs {
		out[i] = pruneItem{kind: "run", name: r.ID, path: r.Dir, when: r.LastUsed, bytes: diskUsage(r.Dir),
			remove: func() (bool, error) {
				if err := nodes.RevokeTokens(context.Background(), r.Dir, allowed); err != nil {
					return false, fmt.Errorf("kept: its minted tokens are not all revoked: %w", err)
				}
				return runtime.RemoveRun(r.Dir)
			}}
	}
	return out, nil
}

// pruneReviews: decided review entries past the cutoff (the queue knows
// its layout and which entries may go; a pending entry is a person's
// to-do and stays).
func pruneReviews(dir string, cutoff time.Time, keep int, allowed []string) ([]pruneItem, error) {
	q := &nodes.ReviewQueue{Dir: dir, AllowEndpoints: allowed}
	entries, err := q.Prunable(cutoff, keep)
	if err != nil {
		return nil, err
	}
	var out []pruneItem
	for _, e := range entries {
		path, id := filepath.Join(dir, e.ID), e.ID
		out = append(out, pruneItem{kind: "review", name: e.ID + " (" + e.Status + ")", path: path, when: e.Touched(), bytes: diskUsage(path),
			remove: func() (bool, error) { return true, q.Remove(id) }})
	}
	return out, nil
}

// pruneSnapshots: snapshots unused since the cutoff
// (sandbox.StaleSnapshots), and those a live run holds, which are kept
// and named.
func pruneSnapshots(cacheDir string, cutoff time.Time) (items, held []pruneItem, err error) {
	stale, leased, err := sandbox.StaleSnapshots(cacheDir, cutoff)
	if err != nil {
		return nil, nil, err
	}
	for _, s := range stale {
		name := s.Commit
		if s.Legacy {
			name = filepath.Base(s.Dir) + " (legacy, hard-linked to a repository)"
		}
		items = append(items, pruneItem{kind: "snapshot", name: name, path: s.Dir, bytes: s.Bytes, when: s.LastUsed,
			remove: func() (bool, error) { return sandbox.RemoveSnapshot(s) }})
	}
	for _, s := range leased {
		held = append(held, pruneItem{kind: "snapshot", name: s.Commit + snapshotRepo(s), path: s.Dir, bytes: s.Bytes, when: s.LastUsed})
	}
	return items, held, nil
}

// pruneImages: unpacked sandbox.images unused since the cutoff, and
// those a live run holds, which are kept and named (as snapshots).
func pruneImages(cacheDir string, cutoff time.Time) (items, held []pruneItem, err error) {
	list, err := sandbox.ListImages(cacheDir)
	if err != nil {
		return nil, nil, err
	}
	for _, i := range list {
		if !i.LastUsed.Before(cutoff) {
			continue
		}
		it := pruneItem{kind: "image", name: imageName(i), path: i.Dir, bytes: i.Bytes, when: i.LastUsed,
			remove: func() (bool, error) { return sandbox.RemoveImage(i) }}
		if i.InUse {
			held = append(held, it)
		} else {
			items = append(items, it)
		}
	}
	return items, held, nil
}

// imageName shows a cached image's key as the digest it is named by.
func imageName(i sandbox.ImageInfo) string { return strings.Replace(i.Key, "sha256-", "sha256:", 1) }

// snapshotRepo names the repository a snapshot was taken of, when known.
func snapshotRepo(s sandbox.SnapshotInfo) string {
	if s.Repo == "" {
		return ""
	}
	return " of " + s.Repo
}

func pruneApply(o pruneOpts, items []pruneItem, stdout, stderr io.Writer) int {
	verb := "removed"
	if o.dryRun {
		verb = "would remove"
	}
	var freed int64
	code := exitOK
	for _, it := range items {
		if !o.dryRun {
			done, err := it.remove()
			if err != nil {
				fmt.Fprintf(stderr, "sandgate: prune %s %s: %v\n", it.kind, termtext.Line(it.path), err)
				code = exitFailed
				continue
			}
			if !done {
				fmt.Fprintf(stdout, "kept %s %s: in use\n", it.kind, termtext.Line(it.name))
				continue
			}
		}
		freed += it.bytes
		fmt.Fprintf(stdout, "%s %-8s %s  %s  (last used %s)\n", verb, it.kind, termtext.Line(it.name), humanBytes(it.bytes), it.when.Format("2006-01-02 15:04"))
	}
	if !o.dryRun {
		removed, err := sandbox.EvictSnapshots(o.cacheDir, sandbox.CacheMax())
		for _, s := range removed {
			freed += s.Bytes
			fmt.Fprintf(stdout, "removed snapshot %s  %s  (cache over its %s cap)\n", termtext.Line(s.Commit), humanBytes(s.Bytes), humanBytes(sandbox.CacheMax()))
		}
		if err != nil {
			fmt.Fprintln(stderr, "sandgate: evict snapshots:", err)
			code = exitFailed
		}
		imgs, err := sandbox.EvictImages(o.cacheDir, sandbox.CacheMax())
		for _, i := range imgs {
			freed += i.Bytes
			fmt.Fprintf(stdout, "removed image %s  %s  (images over the %s cap)\n", imageName(i), humanBytes(i.Bytes), humanBytes(sandbox.CacheMax()))
		}
		if err != nil {
			fmt.Fprintln(stderr, "sandgate: evict images:", err)
			code = exitFailed
		}
	}
	fmt.Fprintf(stdout, "%s %d item(s), %s\n", verb, len(items), humanBytes(freed))
	return code
}

// diskUsage is the space the files under dir take on disk (a sparse
// disk image counts what it holds, not its apparent size).
func diskUsage(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil {
			n += diskBytes(p, d)
		}
		return nil
	})
	return n
}

func humanBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
