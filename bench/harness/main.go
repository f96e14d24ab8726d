// Command harness measures what the harness itself costs per run: the
// workspace (snapshot and box), diff_cap, git_commit, git_push,
// clean-checkout CI's box, review and the run's wrap-up after the last
// node. It measures the three cases a team meets: the first run ever on
// a repository (empty cache), a run on the commit the last run used, and
// the first run after main moved by one commit. Each repository's
// `git clone --no-hardlinks` is timed beside its first run, as the
// yardstick. Everything runs in one process, side by side, so the
// shared machine's noise hits all cases alike.
//
// The repositories: a 10-file one and a long generated history
// (bench/histrepo), and with -real, local clones of real repositories.
//
//	go run ./bench/harness [-runs 3] [-files 5000 -commits 35000 -per 6] [-real name=/path,...]
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/sandgate/sandgate/bench/histrepo"
	"github.com/sandgate/sandgate/sandbox"
)

// repo is one repository under measurement: the user's clone, and the
// files the runs and the new commits edit.
type repo struct {
	name, dir, objects string
	fix                func(i int) string // the run's one-line edit
	move               func(i int) string // a file main's new commit changes
}

func main() {
	sandbox.Main()
	var big histrepo.Spec
	flag.IntVar(&big.Files, "files", 5000, "files in the generated repository")
	flag.IntVar(&big.Commits, "commits", 35000, "commits in the generated repository")
	flag.IntVar(&big.PerCommit, "per", 6, "files each generated commit changes")
	runs := flag.Int("runs", 3, "runs of each case per repository")
	real := flag.String("real", "", "name=path,... of real repositories to clone and measure")
	skipSmall := flag.Bool("no-small", false, "leave out the 10-file repository")
	flag.Parse()
	tmp, err := os.MkdirTemp("", "sg-bench-")
	check(err)
	defer os.RemoveAll(tmp)
	ctx := context.Background()
	var repos []repo
	specs := []struct {
		name string
		spec histrepo.Spec
	}{{"10-file repository", histrepo.Spec{Files: 10, Commits: 5, PerCommit: 1}}, {"generated history", big}}
	if *skipSmall {
		specs = specs[1:]
	}
	for _, s := range specs {
		dir := filepath.Join(tmp, strings.Fields(s.name)[0])
		t0 := time.Now()
		check(histrepo.Generate(ctx, dir, s.spec))
		fmt.Fprintf(os.Stderr, "%s generated in %s\n", s.name, time.Since(t0).Round(time.Millisecond))
		files := s.spec.Files
		repos = append(repos, repo{name: s.name, dir: dir,
			fix: func(i int) string {
				return fmt.Sprintf("sed -i 's/revision/revision (fixed)/' %s", histrepo.Path(i%files))
			},
			move: func(i int) string { return histrepo.Path((i + files/2) % files) }})
	}
	for _, nv := range strings.Split(*real, ",") {
		name, src, ok := strings.Cut(nv, "=")
		if !ok {
			continue
		}
		dir := filepath.Join(tmp, name)
		gitOut("", "clone", "-q", "--no-hardlinks", src, dir)
		goFiles := strings.Fields(gitOut(dir, "ls-files", "--", "*.go"))
		docs := strings.Fields(gitOut(dir, "ls-files", "--", "*.md"))
		if len(goFiles) == 0 || len(docs) == 0 {
			check(fmt.Errorf("%s: no Go or Markdown files to edit", src))
		}
		repos = append(repos, repo{name: name, dir: dir,
			fix: func(i int) string {
				return fmt.Sprintf("echo '// fixed by the benchmark' >> %s", goFiles[i%len(goFiles)])
			},
			move: func(i int) string { return docs[i%len(docs)] }})
	}
	fmt.Printf("machine: %s\n\n", machine())
	for i := range repos {
		r := &repos[i]
		r.objects = objectCount(r.dir)
		measure(ctx, tmp, r, *runs)
	}
}

// measure runs the three cases runs times on r and prints its table.
func measure(ctx context.Context, tmp string, r *repo, runs int) {
	res := map[string][]sample{}
	var clones []time.Duration
	for i := 0; i < runs; i++ {
		cache := filepath.Join(tmp, fmt.Sprintf("cache-%s-%d", strings.Fields(r.name)[0], i))
		ref := filepath.Join(tmp, "clone-ref")
		t0 := time.Now()
		gitOut("", "clone", "-q", "--no-hardlinks", r.dir, ref)
		clones = append(clones, time.Since(t0))
		check(os.RemoveAll(ref))
		res["first"] = append(res["first"], runOnce(ctx, tmp, cache, r, 3*i))
		res["same"] = append(res["same"], runOnce(ctx, tmp, cache, r, 3*i+1))
		moveMain(r, i)
		s := runOnce(ctx, tmp, cache, r, 3*i+2)
		res["new"] = append(res["new"], s)
		res["derived"] = append(res["derived"], derivedCI(ctx, cache, s))
		check(sandbox.UnmountViews(cache)) // a layered snapshot's view a lease left mounted
		check(os.RemoveAll(cache))
		fmt.Fprintf(os.Stderr, "%s: round %d done\n", r.name, i+1)
	}
	fmt.Printf("### %s (%s objects)\n\n", r.name, r.objects)
	fmt.Printf("| case | workspace | cap+commit+push+review | ci node | finish | harness total | cache growth |\n|---|---|---|---|---|---|---|\n")
	for _, c := range []struct{ key, label string }{{"first", "first run ever"}, {"same", "same commit again"},
		{"new", "first run after a new commit"}, {"derived", "the same, ci on LeaseDerivedSnapshot"}} {
		ss := res[c.key]
		col := func(f func(sample) time.Duration) string { return stat(ss, f) }
		fmt.Printf("| %s | %s | %s | %s | %s | %s | %s |\n", c.label, col(func(s sample) time.Duration { return s.workspace }),
			col(func(s sample) time.Duration { return s.steps }), col(func(s sample) time.Duration { return s.ci }),
			col(func(s sample) time.Duration { return s.finish }), col(func(s sample) time.Duration { return s.total }), growth(ss))
	}
	fmt.Printf("\n`git clone --no-hardlinks` of the repository: %s; first run's workspace ÷ clone: %s\n\n",
		stat(nil, nil, clones...), ratio(res["first"], clones))
}

// moveMain commits a one-line change on the user's main, as a team's
// main moves between runs.
func moveMain(r *repo, i int) {
	f := filepath.Join(r.dir, r.move(i))
	b, err := os.ReadFile(f)
	check(err)
	check(os.WriteFile(f, append(b, []byte(fmt.Sprintf("\n// main moved %d\n", i))...), 0o644))
	gitOut(r.dir, "-c", "user.name=bench", "-c", "user.email=bench@localhost", "commit", "-q", "-am", "main moved "+strconv.Itoa(i))
}

func objectCount(dir string) string {
	n := 0
	for _, l := range strings.Split(gitOut(dir, "count-objects", "-v"), "\n") {
		if k, v, ok := strings.Cut(l, ": "); ok && (k == "count" || k == "in-pack") {
			x, _ := strconv.Atoi(v)
			n += x
		}
	}
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

func machine() string {
	load, _ := os.ReadFile("/proc/loadavg")
	mem := "?"
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		f := strings.Fields(string(b))
		if len(f) > 1 {
			kb, _ := strconv.Atoi(f[1])
			mem = fmt.Sprintf("%d GiB", (kb+1<<19)>>20)
		}
	}
	uname, _ := exec.Command("uname", "-sr").Output()
	gitv, _ := exec.Command("git", "version").Output()
	return fmt.Sprintf("%d cores, %s, %s, %s, %s, load average %s at the start", numCPU(), mem,
		strings.TrimSpace(string(uname)), strings.TrimSpace(string(gitv)), goVersion(), strings.Join(strings.Fields(string(load))[:3], " "))
}

func gitOut(dir string, args ...string) string {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
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
