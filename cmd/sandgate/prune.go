package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"syscall"
	"time"

	"github.com/sandgate/sandgate/internal/termtext"
	"github.com/sandgate/sandgate/nodes"
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
}

func cmdPrune(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("prune", "[--older-than 168h] [--keep N] [--dry-run]", stderr)
	var o pruneOpts
	fs.StringVar(&o.runsDir, "runs-dir", filepath.Join(".sandgate", "runs"), "directory holding run directories")
	fs.StringVar(&o.reviewsDir, "reviews-dir", filepath.Join(".sandgate", "reviews"), "local review queue directory")
	fs.StringVar(&o.cacheDir, "cache-dir", sandbox.DefaultCacheDir(), "snapshot cache directory")
	fs.DurationVar(&o.olderThan, "older-than", 168*time.Hour, "remove only what was last used longer ago than this")
	fs.IntVar(&o.keep, "keep", 0, "always keep the N newest runs and N newest review entries")
	fs.BoolVar(&o.dryRun, "dry-run", false, "list what would be removed; remove nothing")
	if pos, err := parseInterspersed(fs, args); err != nil || len(pos) != 0 || o.keep < 0 || o.olderThan < 0 {
		if err == nil {
			fs.Usage()
		}
		return exitUsage
	}
	items, err := pruneCandidates(o, time.Now())
	if err != nil {
		fmt.Fprintln(stderr, "sandgate:", err)
		return exitFailed
	}
	return pruneApply(o, items, stdout, stderr)
}

// pruneCandidates lists what is old enough to go: finished or aborted
// runs (never a live one), decided review entries, unused snapshots.
func pruneCandidates(o pruneOpts, now time.Time) ([]pruneItem, error) {
	cutoff := now.Add(-o.olderThan)
	runs, err := pruneRuns(o.runsDir, cutoff, o.keep)
	if err != nil {
		return nil, err
	}
	reviews, err := pruneReviews(o.reviewsDir, cutoff, o.keep)
	if err != nil {
		return nil, err
	}
	snaps, err := pruneSnapshots(o.cacheDir, cutoff)
	if err != nil {
		return nil, err
	}
	return append(append(runs, reviews...), snaps...), nil
}

// pruneRuns: run directories past the cutoff, beyond the keep newest,
// whose process is gone.
func pruneRuns(dir string, cutoff time.Time, keep int) ([]pruneItem, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var runs []pruneItem
	for _, e := range entries {
		p := filepath.Join(dir, e.Name())
		st, err := os.Stat(filepath.Join(p, "events.jsonl"))
		if !e.IsDir() || err != nil {
			continue // not a run directory
		}
		runs = append(runs, pruneItem{kind: "run", name: e.Name(), path: p, when: st.ModTime()})
	}
	sort.Slice(runs, func(i, j int) bool { return runs[i].when.After(runs[j].when) })
	var out []pruneItem
	for i, r := range runs {
		if i < keep || !r.when.Before(cutoff) || runAlive(r.path) {
			continue
		}
		r.bytes = diskUsage(r.path)
		path := r.path
		r.remove = func() (bool, error) {
			if runAlive(path) { // resumed meanwhile
				return false, nil
			}
			return true, os.RemoveAll(path)
		}
		out = append(out, r)
	}
	return out, nil
}

// runAlive reports whether the run's process (its pid file, removed when
// a run finishes) still exists. A reused pid keeps a dead run: prune errs
// towards keeping.
func runAlive(dir string) bool { return pidFileAlive(dir, true) }

// pruneReviews: decided review entries past the cutoff (the queue knows
// its layout and which entries may go; a pending entry is a person's
// to-do and stays).
func pruneReviews(dir string, cutoff time.Time, keep int) ([]pruneItem, error) {
	q := &nodes.ReviewQueue{Dir: dir}
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

// pruneSnapshots: snapshots unused since the cutoff and not leased by a
// live run.
func pruneSnapshots(cacheDir string, cutoff time.Time) ([]pruneItem, error) {
	list, err := sandbox.ListSnapshots(cacheDir)
	if err != nil {
		return nil, err
	}
	var out []pruneItem
	for _, s := range list {
		if s.InUse || !s.LastUsed.Before(cutoff) {
			continue
		}
		name := s.Commit
		if s.Legacy {
			name = filepath.Base(s.Dir) + " (legacy, hard-linked to a repository)"
		}
		s := s
		out = append(out, pruneItem{kind: "snapshot", name: name, path: s.Dir, bytes: s.Bytes, when: s.LastUsed,
			remove: func() (bool, error) { return sandbox.RemoveSnapshot(s) }})
	}
	return out, nil
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
	}
	fmt.Fprintf(stdout, "%s %d item(s), %s\n", verb, len(items), humanBytes(freed))
	return code
}

// diskUsage is the space the files under dir take on disk (a sparse
// disk image counts what it holds, not its apparent size).
func diskUsage(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		var st syscall.Stat_t
		if err == nil && syscall.Lstat(p, &st) == nil {
			n += st.Blocks * 512
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
