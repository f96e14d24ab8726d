// Command gatecost measures what a gate costs over its own command: a run
// on a generated repository makes a one-line change, then passes through
// gates whose only command is `true`, and a shell node that runs `true`
// in the run's box as the reference. A gate's time beyond the reference
// is the harness's: capturing the candidate and, since issue 23, building
// and throwing away the judge box the verdict is taken in. Built from two
// commits, the program gives the before and after (bench/gatecost.sh).
//
//	go run ./bench/gatecost [-files 10000] [-runs 5] [-gates 3]
//
// It prints one line per run: the shell node's time, then each gate's,
// in milliseconds from the run's journal.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/sandgate/sandgate/bench/histrepo"
	"github.com/sandgate/sandgate/nodes"
	"github.com/sandgate/sandgate/runtime"
	"github.com/sandgate/sandgate/sandbox"
)

func main() {
	sandbox.Main()
	files := flag.Int("files", 10000, "files in the repository")
	runs := flag.Int("runs", 5, "runs")
	gates := flag.Int("gates", 3, "gates per run")
	flag.Parse()
	tmp, err := os.MkdirTemp("", "sg-gatecost-")
	check(err)
	defer os.RemoveAll(tmp)
	ctx := context.Background()
	repo := filepath.Join(tmp, "repo")
	check(histrepo.Generate(ctx, repo, histrepo.Spec{Files: *files, Commits: 1, PerCommit: 1}))
	src := blueprint(histrepo.Path(1), *gates)
	for i := 0; i < *runs; i++ {
		rt := &runtime.Runtime{Registry: nodes.NewRegistry(), RunsDir: filepath.Join(tmp, "runs"),
			Prepare: nodes.Environment(nodes.EnvOptions{Repo: repo, CacheDir: filepath.Join(tmp, "cache")})}
		b, err := rt.Registry.Parse("gates.yaml", []byte(src))
		check(err)
		sum, err := rt.Run(ctx, b, runtime.RunOptions{Workspace: repo})
		check(err)
		if sum.Status != runtime.StatusSucceeded {
			check(fmt.Errorf("run %s: %s", sum.Status, sum.Reason))
		}
		events, err := runtime.ReadJournal(filepath.Join(sum.Dir, "events.jsonl"))
		check(err)
		ms := map[string]int64{}
		for _, ev := range events {
			if ev.Type == runtime.EvNodeFinished {
				ms[ev.Node] = ev.DurationMS
			}
		}
		line := []string{fmt.Sprintf("shell=%d", ms["ref"])}
		for g := 1; g <= *gates; g++ {
			line = append(line, fmt.Sprintf("gate%d=%d", g, ms[fmt.Sprintf("g%d", g)]))
		}
		fmt.Println(strings.Join(line, " "))
	}
}

// blueprint edits file, runs `true` in the run's box (ref), then gates
// g1..gN each running `true`.
func blueprint(file string, gates int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "version: 1\nname: gatecost\nstart: fix\nnodes:\n")
	fmt.Fprintf(&b, "  fix: {type: shell, run: \"sed -i 's/revision/revision (fixed)/' %s\", next: ref}\n", file)
	fmt.Fprintf(&b, "  ref: {type: shell, run: \"true\", next: g1}\n")
	for g := 1; g <= gates; g++ {
		next := fmt.Sprintf("g%d", g+1)
		if g == gates {
			next = "done"
		}
		fmt.Fprintf(&b, "  g%d: {type: lint, run: \"true\", next: %s}\n", g, next)
	}
	b.WriteString("  done: {type: succeed}\n")
	return b.String()
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
