package runtime

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"time"
)

// OldRun is a run directory that Prune may remove.
type OldRun struct {
	ID, Dir string
	// LastUsed is when its journal was last written.
	LastUsed time.Time
}

// OldRuns lists the run directories under runsDir whose journal was last
// written before cutoff, newest first, leaving out the keep newest runs
// and every run a process carries on (Alive). A directory without a
// journal is not a run and is never listed.
func OldRuns(runsDir string, cutoff time.Time, keep int) ([]OldRun, error) {
	entries, err := os.ReadDir(runsDir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var runs []OldRun
	for _, e := range entries {
		dir := filepath.Join(runsDir, e.Name())
		st, err := os.Stat(filepath.Join(dir, "events.jsonl"))
		if !e.IsDir() || err != nil {
			continue
		}
		runs = append(runs, OldRun{ID: e.Name(), Dir: dir, LastUsed: st.ModTime()})
	}
	sort.Slice(runs, func(i, j int) bool { return runs[i].LastUsed.After(runs[j].LastUsed) })
	var out []OldRun
	for i, r := range runs {
		if i < keep || !r.LastUsed.Before(cutoff) {
			continue
		}
		if alive, _ := Alive(r.Dir); alive {
			continue
		}
		out = append(out, r)
	}
	return out, nil
}

// RemoveRun deletes a run directory unless a process carries it on, and
// reports whether it did. It holds the run's lock while it checks and
// removes, so no resume or answer can start on a half-deleted run.
func RemoveRun(dir string) (bool, error) {
	lock, err := lockRun(dir)
	if errors.Is(err, ErrRunBusy) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	defer lock.Close()
	if alive, _ := Alive(dir); alive {
		return false, nil
	}
	return true, os.RemoveAll(dir)
}
