package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	goruntime "runtime"
	"sort"
	"strings"
	"time"

	"github.com/sandgate/sandgate/bench/histrepo"
	"github.com/sandgate/sandgate/blueprint"
	"github.com/sandgate/sandgate/nodes"
	"github.com/sandgate/sandgate/runtime"
	"github.com/sandgate/sandgate/sandbox"
)

// sample is one run's figures.
type sample struct {
	// workspace: Prepare (the snapshot and the run's box); steps: the
	// diff_cap, git_commit, git_push and review nodes; ci: the ci node
	// (its clean-checkout box, running `true`); finish: from the last
	// node's end to Run's return; total: the run's wall time but for
	// the edit itself (the shell node standing in for the agent).
	workspace, steps, ci, finish, total time.Duration
	growth                              int64 // cache bytes the run added
	// for derivedCI: the run's directory and snapshot, and the ci
	// node's share of the cache growth.
	runDir, base string
}

// runOnce runs the benchmark blueprint once on r with the shared cache.
func runOnce(ctx context.Context, tmp, cache string, r *repo, i int) sample {
	work := filepath.Join(tmp, fmt.Sprintf("run-%d", time.Now().UnixNano()))
	remote := filepath.Join(work, "remote.git")
	gitOut("", "clone", "-q", "--bare", "--shared", r.dir, remote)
	var s sample
	env := nodes.Environment(nodes.EnvOptions{Repo: r.dir, CacheDir: cache})
	rt := &runtime.Runtime{Registry: nodes.NewRegistry(), RunsDir: filepath.Join(work, "runs"),
		Prepare: func(ctx context.Context, runDir string, bp *blueprint.Blueprint, resume bool) (*runtime.Environment, error) {
			t0 := time.Now()
			e, err := env(ctx, runDir, bp, resume)
			s.workspace = time.Since(t0)
			return e, err
		}}
	b, err := rt.Registry.Parse("steps.yaml", []byte(histrepo.RunBlueprint(r.fix(i), remote, filepath.Join(work, "reviews"))))
	check(err)
	before, err := sandbox.CacheBytes(cache)
	check(err)
	t0 := time.Now()
	sum, err := rt.Run(ctx, b, runtime.RunOptions{Workspace: r.dir})
	wall, end := time.Since(t0), time.Now()
	check(err)
	if sum.Status != runtime.StatusSucceeded {
		check(fmt.Errorf("%s: run %s: %s", r.name, sum.Status, sum.Reason))
	}
	after, err := sandbox.CacheBytes(cache)
	check(err)
	events, err := runtime.ReadJournal(filepath.Join(sum.Dir, "events.jsonl"))
	check(err)
	var last time.Time
	var fix time.Duration
	for _, ev := range events {
		if ev.Type != runtime.EvNodeFinished {
			continue
		}
		d := time.Duration(ev.DurationMS) * time.Millisecond
		switch ev.Node {
		case "fix":
			fix = d
		case "ci":
			s.ci = d
		default:
			s.steps += d
		}
		last = ev.Time
	}
	s.finish, s.total, s.growth = end.Sub(last), wall-fix, after-before
	base, err := os.ReadFile(filepath.Join(sum.Dir, "base"))
	check(err)
	s.runDir, s.base = sum.Dir, filepath.Join(cache, "snapshots", string(base))
	return s
}

// derivedCI is run s with its ci node's box built the way the ci node
// is to build it (sandbox.LeaseDerivedSnapshot on the run's snapshot,
// from its promotion repository) instead of the ci node's own: the ci
// node's snapshot is removed, then the box is built and runs `true`.
func derivedCI(ctx context.Context, cache string, s sample) sample {
	b, err := os.ReadFile(filepath.Join(s.runDir, "commit.json"))
	check(err)
	var c struct {
		Commit string `json:"commit"`
	}
	check(json.Unmarshal(b, &c))
	before, err := sandbox.CacheBytes(cache)
	check(err)
	list, err := sandbox.ListSnapshots(cache)
	check(err)
	for _, sn := range list {
		if sn.Commit == c.Commit {
			_, err := sandbox.RemoveSnapshot(sn)
			check(err)
		}
	}
	legacy, err := sandbox.CacheBytes(cache)
	check(err)
	t0 := time.Now()
	lease, err := sandbox.LeaseDerivedSnapshot(ctx, cache, s.base, filepath.Join(s.runDir, "promote.git"), c.Commit)
	check(err)
	state, err := os.MkdirTemp("", "sg-bench-ci-")
	check(err)
	box, err := sandbox.Start(ctx, sandbox.Options{Snapshot: lease.Dir, StateDir: state})
	check(err)
	res, err := box.Exec(ctx, sandbox.Command{Args: []string{"true"}})
	check(err)
	check(box.Close())
	ci := time.Since(t0)
	check(os.RemoveAll(state))
	check(lease.Release())
	if res.ExitCode != 0 {
		check(fmt.Errorf("true exited %d", res.ExitCode))
	}
	after, err := sandbox.CacheBytes(cache)
	check(err)
	d := s
	d.total = s.total - s.ci + ci
	d.ci = ci
	d.growth = s.growth - (before - legacy) + (after - legacy)
	return d
}

// stat is the median and range of f over samples (or of ds).
func stat(samples []sample, f func(sample) time.Duration, ds ...time.Duration) string {
	for _, s := range samples {
		ds = append(ds, f(s))
	}
	if len(ds) == 0 {
		return "–"
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	med := ds[len(ds)/2]
	if len(ds) == 1 {
		return short(med)
	}
	return fmt.Sprintf("%s (%s–%s)", short(med), short(ds[0]), short(ds[len(ds)-1]))
}

func short(d time.Duration) string {
	switch {
	case d >= 10*time.Second:
		return d.Round(100 * time.Millisecond).String()
	case d >= time.Second:
		return d.Round(10 * time.Millisecond).String()
	default:
		return d.Round(time.Millisecond).String()
	}
}

// growth is the median cache growth, in MB.
func growth(ss []sample) string {
	var gs []int64
	for _, s := range ss {
		gs = append(gs, s.growth)
	}
	sort.Slice(gs, func(i, j int) bool { return gs[i] < gs[j] })
	mb := func(n int64) string { return fmt.Sprintf("%.1f MB", float64(n)/1e6) }
	if len(gs) == 1 {
		return mb(gs[0])
	}
	return fmt.Sprintf("%s (%s–%s)", mb(gs[len(gs)/2]), mb(gs[0]), mb(gs[len(gs)-1]))
}

// ratio is the median of the first runs' workspace over the clone taken
// beside each.
func ratio(ss []sample, clones []time.Duration) string {
	var rs []float64
	for i, s := range ss {
		if i < len(clones) {
			rs = append(rs, float64(s.workspace)/float64(clones[i]))
		}
	}
	sort.Float64s(rs)
	var parts []string
	for _, r := range rs {
		parts = append(parts, fmt.Sprintf("%.2f", r))
	}
	if len(rs) == 0 {
		return "–"
	}
	return fmt.Sprintf("%.2f× (each round: %s)", rs[len(rs)/2], strings.Join(parts, ", "))
}

func numCPU() int       { return goruntime.NumCPU() }
func goVersion() string { return goruntime.Version() }
