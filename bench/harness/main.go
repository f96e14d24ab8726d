// Command harness measures the harness's own steps (diff_cap, git_commit,
// git_push, review, and the run's finish after the last node) on a
// large-history repository next to a 10-file one, in one process, and
// prints a markdown table with the ratios.
//
//	go run ./bench/harness [-files 5000 -commits 35000 -per 6] [-runs 5]
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/sandgate/sandgate/bench/histrepo"
	"github.com/sandgate/sandgate/nodes"
	"github.com/sandgate/sandgate/runtime"
	"github.com/sandgate/sandgate/sandbox"
)

var steps = []string{"cap", "commit", "push", "review", "finish"}

func main() {
	sandbox.Main()
	var big histrepo.Spec
	flag.IntVar(&big.Files, "files", 5000, "files in the large repository")
	flag.IntVar(&big.Commits, "commits", 35000, "commits in the large repository")
	flag.IntVar(&big.PerCommit, "per", 6, "files each generated commit changes")
	runs := flag.Int("runs", 5, "runs per repository")
	flag.Parse()
	tmp, err := os.MkdirTemp("", "sg-bench-")
	check(err)
	defer os.RemoveAll(tmp)
	ctx := context.Background()
	repos := map[string]histrepo.Spec{"small": {Files: 10, Commits: 5, PerCommit: 1}, "large": big}
	times := map[string]map[string][]time.Duration{}
	objects := map[string]string{}
	for _, name := range []string{"small", "large"} {
		dir := filepath.Join(tmp, name)
		t0 := time.Now()
		check(histrepo.Generate(ctx, dir, repos[name]))
		objects[name] = strings.TrimSpace(gitOut(dir, "rev-list", "--all", "--objects", "--count"))
		fmt.Fprintf(os.Stderr, "%s: %s objects generated in %s\n", name, objects[name], time.Since(t0).Round(time.Millisecond))
		times[name] = map[string][]time.Duration{}
		for i := 0; i < *runs; i++ {
			for step, d := range runOnce(ctx, tmp, dir, i) {
				times[name][step] = append(times[name][step], d)
			}
		}
	}
	fmt.Printf("| step | 10-file repo (%s objects) | large repo (%s objects) | large ÷ small |\n|---|---|---|---|\n", objects["small"], objects["large"])
	var totS, totL time.Duration
	for _, s := range append(steps, "total") {
		var ms, ml time.Duration
		if s == "total" {
			ms, ml = totS, totL
		} else {
			ms, ml = median(times["small"][s]), median(times["large"][s])
			totS, totL = totS+ms, totL+ml
		}
		fmt.Printf("| %s | %s (%s) | %s (%s) | %.2f× |\n", s, ms.Round(10*time.Microsecond), spread(times["small"][s]),
			ml.Round(10*time.Microsecond), spread(times["large"][s]), float64(ml)/float64(max(ms, 1)))
	}
}

// runOnce runs the blueprint once and returns each step's duration: the
// node's own, and for finish the time from the last node's end to Run's
// return.
func runOnce(ctx context.Context, tmp, repo string, i int) map[string]time.Duration {
	work := filepath.Join(tmp, fmt.Sprintf("%s-%d", filepath.Base(repo), i))
	remote := filepath.Join(work, "remote.git")
	gitOut("", "clone", "-q", "--bare", "--shared", repo, remote)
	rt := &runtime.Runtime{Registry: nodes.NewRegistry(), RunsDir: filepath.Join(work, "runs"),
		Prepare: nodes.Environment(nodes.EnvOptions{Repo: repo, CacheDir: filepath.Join(tmp, "cache")})}
	src := histrepo.StepsBlueprint(histrepo.Path(i), remote, filepath.Join(work, "reviews"))
	b, err := rt.Registry.Parse("steps.yaml", []byte(src))
	check(err)
	sum, err := rt.Run(ctx, b, runtime.RunOptions{Workspace: repo})
	end := time.Now()
	check(err)
	if sum.Status != runtime.StatusSucceeded {
		check(fmt.Errorf("run %s: %s", sum.Status, sum.Reason))
	}
	events, err := runtime.ReadJournal(filepath.Join(sum.Dir, "events.jsonl"))
	check(err)
	out := map[string]time.Duration{}
	var last time.Time
	for _, ev := range events {
		if ev.Type == runtime.EvNodeFinished {
			out[ev.Node] = time.Duration(ev.DurationMS) * time.Millisecond
			last = ev.Time
		}
	}
	out["finish"] = end.Sub(last)
	return out
}

func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

func spread(ds []time.Duration) string {
	if len(ds) == 0 {
		return "sum of medians"
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[0].Round(10*time.Microsecond).String() + "–" + s[len(s)-1].Round(10*time.Microsecond).String()
}

func gitOut(dir string, args ...string) string {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		check(fmt.Errorf("git %v: %w: %s", args, err, out))
	}
	return string(out)
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
