package index

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"
)

// Run is one run as the index knows it: what the runs list shows and
// filters on. It is also what a `sandgate stats` command would aggregate.
type Run struct {
	// Root is the position of the run's runs directory in Index.Dirs.
	Root       int
	ID         string
	Dir        string
	Status     string
	Kind       string
	Reason     string
	Blueprint  string
	Repository string
	Started    time.Time
	DurationMS int64
	Tokens     int
	NodeRuns   int
	// Cost is run.json's "cost", when the run recorded one, else the sum
	// of its journaled attempts' costs when there are any.
	Cost *float64
	// Fails counts the attempts that failed or broke, by "node (type)";
	// Flaky lists the tests a test gate found flaky (outputs.flaky).
	Fails map[string]int
	Flaky []string
	// Task is the first line of the run's task input; Branch the branch
	// its change was committed to; Failures the tests that failed in its
	// last test gate attempt.
	Task     string
	Branch   string
	Failures []string
	// Labels are meta.json's labels (`sandgate run --label`).
	Labels map[string]string

	// search is every text the list's search looks in, lower-cased once
	// when the run is (re)read, so a search reads no file.
	search string
	// inputs is the run's inputs as JSON, part of search.
	inputs string

	size  int64
	mtime time.Time
	// runJSON: run.json was there when the run was read (parsed or not).
	runJSON bool
	// unfinished: the journal has no run_finished (after its last
	// answer), so whether the run is running depends on its process.
	unfinished bool
}

// Index keeps every run of a set of runs directories in memory and
// refreshes incrementally. On Linux it watches the runs directories and
// the directories of the runs that may still change (inotify), so a
// refresh reads only the runs an event named and asks the running ones'
// harnesses whether they still live; without a watcher (another system,
// the watch limit reached, events lost) a refresh lists the directories
// and stats each run's events.jsonl. Either way a run's files are read
// only when it is new or its journal changed.
type Index struct {
	Dirs []string
	// MinRefresh is how old the index may get before a read refreshes it
	// (default 1s; negative refreshes on every read).
	MinRefresh time.Duration
	// FullScan is how often a refresh lists and stats every run even
	// with a watcher (default 1 min; negative: every time, as without
	// inotify). Events miss what other hosts write to a runs directory on
	// shared storage, and a settled run's files changed by hand.
	FullScan time.Duration

	mu     sync.Mutex
	runs   map[string]*Run
	sorted []*Run
	last   time.Time
	// gen counts the refreshes that changed something, so a live page
	// can tell a change without comparing runs.
	gen uint64
	// watch says which runs changed (inotify), nil when none could be
	// set up: then every refresh stats every run. noWatch: do not try.
	watch    *watcher
	noWatch  bool
	lastFull time.Time
	scans    int
	cleanup  runtime.Cleanup
}

// Generation is a number that moves whenever a refresh changed the index
// (it refreshes first when older than MinRefresh, as Runs does).
func (ix *Index) Generation() uint64 {
	ix.Runs()
	ix.mu.Lock()
	defer ix.mu.Unlock()
	return ix.gen
}

// NewIndex makes an index of the given runs directories. It reads nothing
// until the first Refresh or Runs.
func NewIndex(dirs ...string) *Index {
	return &Index{Dirs: dirs, runs: map[string]*Run{}}
}

// Runs returns every run, newest first, refreshing the index first when
// it is older than MinRefresh. The slice and its runs must not be changed.
func (ix *Index) Runs() []*Run {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	every := ix.MinRefresh
	if every == 0 {
		every = time.Second
	}
	if every < 0 || time.Since(ix.last) >= every {
		ix.refreshLocked()
	}
	return ix.sorted
}

// Refresh brings the index up to date now.
func (ix *Index) Refresh() {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	ix.refreshLocked()
}

// Get returns one run as of the last refresh.
func (ix *Index) Get(root int, id string) *Run {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	return ix.runs[itoa(root)+"/"+id]
}

func (ix *Index) refreshLocked() {
	full := ix.FullScan
	if full == 0 {
		full = time.Minute
	}
	var changed bool
	if ix.watch != nil && full > 0 && time.Since(ix.lastFull) < full {
		changed = ix.refreshWatched()
	} else {
		changed = ix.refreshAll()
	}
	if changed {
		ix.gen++
	}
	if changed || ix.sorted == nil {
		ix.sorted = ix.sorted[:0:0]
		for _, r := range ix.runs {
			ix.sorted = append(ix.sorted, r)
		}
		slices.SortFunc(ix.sorted, func(a, b *Run) int {
			if c := b.Started.Compare(a.Started); c != 0 {
				return c
			}
			return strings.Compare(b.ID, a.ID)
		})
	}
	ix.last = time.Now()
}

// refreshAll lists every runs directory and stats every run: the first
// refresh, and every one where no watcher can say what changed. It
// starts the watcher first, so nothing written during the scan is lost.
func (ix *Index) refreshAll() bool {
	ix.startWatch()
	ix.lastFull = time.Now()
	seen := make(map[string]bool, len(ix.runs))
	changed := false
	for i, dir := range ix.Dirs {
		if ix.refreshDir(i, dir, seen) {
			changed = true
		}
	}
	for k := range ix.runs {
		if !seen[k] {
			delete(ix.runs, k)
			changed = true
		}
	}
	return changed
}

// refreshDir updates the runs of one directory and reports a change.
func (ix *Index) refreshDir(root int, dir string, seen map[string]bool) bool {
	r, err := os.OpenRoot(dir)
	if err != nil {
		return false
	}
	defer r.Close()
	f, err := r.Open(".")
	if err != nil {
		return false
	}
	ents, _ := f.ReadDir(-1)
	f.Close()
	changed := false
	for _, e := range ents {
		name := e.Name()
		// The directory's own type comes with the listing: a symlink is
		// never a run. The stat below only says whether to re-read; the
		// reads themselves go through os.Root.
		if !e.IsDir() || !ValidName(name) {
			continue
		}
		st, err := os.Lstat(filepath.Join(dir, name, "events.jsonl"))
		if err != nil || !st.Mode().IsRegular() {
			continue
		}
		k := itoa(root) + "/" + name
		seen[k] = true
		old := ix.runs[k]
		if unchanged(old, st, dir, name) {
			if !settled(old) {
				ix.track(k, filepath.Join(dir, name), nil) // a new watcher after lost events
			}
			if now := recheck(r, old); now != nil {
				ix.runs[k], changed = now, true
			}
			continue
		}
		ix.track(k, filepath.Join(dir, name), nil) // before the read: a write after it is an event
		run := loadRun(r, root, dir, name)
		run.size, run.mtime = st.Size(), st.ModTime()
		ix.runs[k] = run
		ix.track(k, "", run)
		changed = true
	}
	return changed
}

// recheck looks again at an unfinished run whose journal did not change:
// its harness may have died since. It returns the run as it is now when
// its status changed, as a copy (pages may be reading the old one).
func recheck(r *os.Root, run *Run) *Run {
	if !run.unfinished {
		return nil
	}
	status, reason := LiveStatus(r, run.ID)
	if status == run.Status {
		return nil
	}
	now := *run
	now.Status, now.Reason = status, reason
	now.search = searchText(&now)
	return &now
}

// unchanged: the run was read with this journal (size and time) and
// nothing since made its run.json.
func unchanged(old *Run, st os.FileInfo, dir, name string) bool {
	return old != nil && old.size == st.Size() && old.mtime.Equal(st.ModTime()) && (old.runJSON || !exists(dir, name))
}

// exists reports whether a run has written its run.json yet.
func exists(dir, name string) bool {
	_, err := os.Lstat(filepath.Join(dir, name, "run.json"))
	return err == nil
}

// loadRun reads one run's journal, meta.json and run.json.
func loadRun(r *os.Root, root int, dir, name string) *Run {
	run := &Run{Root: root, ID: name, Dir: filepath.Join(dir, name)}
	events, _ := ReadEvents(r, name+"/events.jsonl")
	v := Fold(events)
	run.Status, run.Kind, run.Reason, run.Blueprint = v.Status, v.Kind, v.Reason, v.Blueprint
	run.Started, run.DurationMS, run.Tokens, run.NodeRuns = v.Started, v.DurationMS(), v.Tokens, v.NodeRuns
	if v.Cost > 0 {
		c := v.Cost
		run.Cost = &c
	}
	run.Fails, run.Flaky = failsAndFlaky(r, name, v)
	run.Task, run.Branch, run.Failures = taskOf(v.Inputs), branchOf(v), failuresOf(v)
	if run.unfinished = !v.finished && !v.Last.IsZero(); run.unfinished {
		run.Status, run.Reason = LiveStatus(r, name)
	}
	var meta struct {
		Workspace string            `json:"workspace"`
		Labels    map[string]string `json:"labels"`
	}
	if b, _, err := ReadCapped(r, name+"/meta.json", 1<<20); err == nil {
		_ = json.Unmarshal(b, &meta)
		run.Repository, run.Labels = meta.Workspace, meta.Labels
	}
	var sum struct {
		Cost       *float64 `json:"cost"`
		DurationMS int64    `json:"duration_ms"`
	}
	b, _, err := ReadCapped(r, name+"/run.json", 4<<20)
	// Read once it is there, whether or not it parses: a run.json that
	// does not parse was read again on every refresh that stats the runs
	// (its whole journal with it).
	run.runJSON = !errors.Is(err, fs.ErrNotExist)
	if err == nil && json.Unmarshal(b, &sum) == nil {
		if sum.Cost != nil {
			run.Cost = sum.Cost
		}
		if sum.DurationMS > 0 {
			run.DurationMS = sum.DurationMS
		}
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		run.Reason = "run.json: " + err.Error()
	}
	in, _ := json.Marshal(v.Inputs)
	run.inputs = string(in)
	run.search = searchText(run)
	return run
}

// Blueprints lists the blueprint names of runs, sorted.
func Blueprints(runs []*Run) []string {
	set := map[string]bool{}
	for _, r := range runs {
		set[r.Blueprint] = true
	}
	out := make([]string, 0, len(set))
	for b := range set {
		if b != "" {
			out = append(out, b)
		}
	}
	slices.Sort(out)
	return out
}
