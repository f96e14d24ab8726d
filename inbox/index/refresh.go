package index

import (
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
)

// startWatch sets up the watcher and watches the runs directories,
// unless it is running or cannot run; a failure leaves full scans. The
// first refresh only scans: a one-shot reader (sandgate stats) never
// takes an inotify instance, of which a user has few (128 by default).
func (ix *Index) startWatch() {
	ix.scans++
	if ix.watch != nil || ix.noWatch || ix.scans < 2 {
		return
	}
	w, err := newWatcher()
	if err != nil {
		ix.noWatch = true
		return
	}
	ix.watch = w
	// An index dropped without Close gives its instance back when
	// collected (servers in tests, a CLI that forgets).
	ix.cleanup = runtime.AddCleanup(ix, func(w *watcher) { w.close() }, w)
	for i, dir := range ix.Dirs {
		if err := w.watchDir(i, dir); err != nil {
			ix.stopWatch()
			return
		}
	}
}

// stopWatch gives up on events for good (the watch limit reached): full
// scans from now on.
func (ix *Index) stopWatch() {
	ix.dropWatch()
	ix.noWatch = true
}

// dropWatch closes the watcher; the next full scan may start another.
func (ix *Index) dropWatch() {
	if ix.watch != nil {
		ix.cleanup.Stop()
		ix.watch.close()
		ix.watch = nil
	}
}

// Close lets go of the index's watcher (an inotify instance); the index
// still works, by full scans.
func (ix *Index) Close() {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	ix.stopWatch()
}

// settled: a run that will not change again (ended for good with its
// run.json written) needs no watch; a handed-off run may be answered, an
// unfinished one resumed.
func settled(r *Run) bool {
	return r.runJSON && !r.unfinished && (r.Status == "succeeded" || r.Status == "failed" || r.Status == "canceled")
}

// track watches the run at key while it may change: before its read
// (path set, run nil) and after it (run set: settled runs are let go).
func (ix *Index) track(key, path string, run *Run) {
	switch {
	case ix.watch == nil:
	case run == nil:
		if err := ix.watch.watchRun(key, path); err != nil {
			ix.stopWatch()
		}
	case settled(run):
		ix.watch.unwatchRun(key)
	}
}

// refreshWatched reads the runs the watcher's events name, and looks
// again at the unfinished ones (a harness can die without a write).
func (ix *Index) refreshWatched() bool {
	dirty, lost := ix.watch.changes()
	if lost {
		ix.dropWatch()
		return ix.refreshAll()
	}
	changed := false
	for k := range dirty {
		if ix.refreshOne(k) {
			changed = true
		}
	}
	roots := map[int]*os.Root{}
	defer func() {
		for _, r := range roots {
			r.Close()
		}
	}()
	for k, run := range ix.runs {
		if !run.unfinished || dirty[k] {
			continue
		}
		r := roots[run.Root]
		if r == nil {
			var err error
			if r, err = os.OpenRoot(ix.Dirs[run.Root]); err != nil {
				continue
			}
			roots[run.Root] = r
		}
		if now := recheck(r, run); now != nil {
			ix.runs[k], changed = now, true
		}
	}
	return changed
}

// refreshOne brings one run, "ROOT/NAME", up to date: read again when its
// journal or run.json changed, dropped when it is gone.
func (ix *Index) refreshOne(key string) bool {
	rs, name, _ := strings.Cut(key, "/")
	root, err := strconv.Atoi(rs)
	if err != nil || root < 0 || root >= len(ix.Dirs) {
		return false
	}
	dir := ix.Dirs[root]
	old := ix.runs[key]
	drop := func() bool {
		ix.watch.unwatchRun(key)
		delete(ix.runs, key)
		return old != nil
	}
	if fi, err := os.Lstat(filepath.Join(dir, name)); err != nil || !fi.IsDir() || !ValidName(name) {
		return drop()
	}
	ix.track(key, filepath.Join(dir, name), nil)
	st, err := os.Lstat(filepath.Join(dir, name, "events.jsonl"))
	if err != nil || !st.Mode().IsRegular() {
		delete(ix.runs, key) // no journal (yet): the watch stays for it
		return old != nil
	}
	if unchanged(old, st, dir, name) {
		ix.track(key, "", old) // a settled run's watch, taken again above, goes
		return false
	}
	r, err := os.OpenRoot(dir)
	if err != nil {
		return false
	}
	defer r.Close()
	run := loadRun(r, root, dir, name)
	run.size, run.mtime = st.Size(), st.ModTime()
	ix.runs[key] = run
	ix.track(key, "", run)
	return true
}
