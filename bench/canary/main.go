// Command canary measures what the test gate's seals and canaries
// (internal/gocanary) cost over the test command alone, on a real
// repository: each round makes a fresh one-line change to one file (as an
// agent's change would), then runs the command plainly, with canaries on
// the packages the change reaches (what the gate does), and with canaries
// on every package (the cost of the design before, which canaried and so
// relinked and re-ran every package on every gate run). Arms alternate, on
// the host (no box: the box's cost is not the canary's), and the table
// gives medians with min–max and the ratios to the plain command.
//
//	go run ./bench/canary -repo ~/src/prometheus -change model/labels/labels_common.go \
//	    -runs 5 ./model/labels ./promql/parser ./model/textparse ./model/relabel ./util/strutil
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/sandgate/sandgate/internal/gocanary"
	"github.com/sandgate/sandgate/internal/gocanary/gocanarytest"
	"github.com/sandgate/sandgate/sandbox"
)

var arms = []string{"plain", "canary", "canary-all"}

func main() {
	repo := flag.String("repo", "", "the repository (its module root)")
	change := flag.String("change", "", "the file each round changes (relative to -repo)")
	runs := flag.Int("runs", 5, "rounds (each runs every arm once)")
	armList := flag.String("arms", strings.Join(arms, ","), "the arms to run, in order")
	warmup := flag.Bool("warmup", true, "run a discarded warm-up round first")
	phases := flag.Bool("phases", false, "print how long building the plan and each box command took")
	flag.Parse()
	pkgs := flag.Args()
	if *repo == "" || *change == "" || len(pkgs) == 0 {
		fmt.Fprintln(os.Stderr, "usage: canary -repo DIR -change FILE [-runs N] PACKAGE...")
		os.Exit(2)
	}
	arms = strings.Split(*armList, ",")
	orig, err := os.ReadFile(filepath.Join(*repo, *change))
	check(err)
	defer os.WriteFile(filepath.Join(*repo, *change), orig, 0o644)
	execPath := filepath.Join(os.TempDir(), "sandgate-bench-canary-exec")
	times := map[string][]time.Duration{}
	cpus := map[string][]time.Duration{}
	var canaried []string
	args := append([]string{"go", "test", "-json"}, pkgs...)
	// A warm-up round fills the caches every arm then shares.
	first := -1
	if !*warmup {
		first = 0
	}
	for round := first; round < *runs; round++ {
		for _, arm := range arms {
			// A change of its own for every arm, round and invocation that
			// changes the test binaries (an init the linker keeps, not a dead
			// variable it drops): nothing is cached for it, as after an
			// agent's edit.
			edit := fmt.Sprintf("%s\nvar benchCanarySink int64\n\nfunc init() { benchCanarySink = %d }\n", orig, time.Now().UnixNano())
			check(os.WriteFile(filepath.Join(*repo, *change), []byte(edit), 0o644))
			t0, c0 := time.Now(), cpuTime()
			var out []byte
			switch arm {
			case "plain":
				res, err := local(*repo)(context.Background(), sandbox.Command{Args: args, Timeout: time.Hour})
				check(err)
				out = res.Output
			default:
				o := gocanary.Options{Changed: []string{*change}, All: arm == "canary-all", Failing: true, Passing: true, Root: *repo, ExecPath: execPath, Command: args}
				p := gocanary.NewPlan(gocanary.DirTree(*repo), o)
				ex := local(*repo)
				if *phases {
					fmt.Fprintf(os.Stderr, "  plan %s\n", time.Since(t0).Round(time.Millisecond))
					ex = timed(ex)
				}
				raw, err := p.Run(context.Background(), ex, args, time.Hour, 256<<20)
				check(err)
				res, problems := p.Decode(raw)
				if len(problems) > 0 {
					fmt.Fprintln(os.Stderr, "canary problems (an honest change must have none):", problems)
					os.Exit(1)
				}
				out = res.Output
				if arm == "canary" {
					canaried = p.Packages()
				}
			}
			d, cpu := time.Since(t0), cpuTime()-c0
			fmt.Fprintf(os.Stderr, "round %d %-10s %s cpu %s (%d passes, %d cached)\n", round, arm, d.Round(time.Millisecond), cpu.Round(time.Millisecond), bytes.Count(out, []byte(`"Action":"pass","Package"`)), bytes.Count(out, []byte("(cached)")))
			if round >= 0 {
				times[arm] = append(times[arm], d)
				cpus[arm] = append(cpus[arm], cpu)
			}
		}
	}
	if *runs == 0 {
		return // a warm-up alone
	}
	fmt.Printf("repository: %s (`%s`), change: a new init in %s for each arm and round; %d packages canaried (the command tests those of them it names)\n\n", *repo, strings.Join(args, " "), *change, len(canaried))
	fmt.Println("| arm | wall time | ÷ plain | CPU time (user+sys) | ÷ plain |\n|---|---|---|---|---|")
	for _, arm := range arms {
		fmt.Printf("| %s | %s | %s |\n", arm, cell(times, arm), cell(cpus, arm))
	}
}

// cell is an arm's median with min–max, and the medians' ratio to plain.
func cell(m map[string][]time.Duration, arm string) string {
	r := func(d time.Duration) time.Duration { return d.Round(time.Millisecond) }
	return fmt.Sprintf("%s (%s–%s) | %.2f×", r(median(m[arm])), r(slices.Min(m[arm])), r(slices.Max(m[arm])), float64(median(m[arm]))/float64(median(m["plain"])))
}

// local runs a command in dir on the host, as the box would.
func local(dir string) gocanary.Exec { return gocanarytest.HostExec(dir) }

// timed prints how long each box command took.
func timed(ex gocanary.Exec) gocanary.Exec {
	return func(ctx context.Context, c sandbox.Command) (*sandbox.Result, error) {
		t0, c0 := time.Now(), cpuTime()
		res, err := ex(ctx, c)
		first, _, _ := strings.Cut(string(c.Stdin), "\n")
		if i := strings.LastIndex(string(c.Stdin), "go test"); i >= 0 {
			first, _, _ = strings.Cut(string(c.Stdin[i:]), "\n")
		}
		fmt.Fprintf(os.Stderr, "  box command %s cpu %s: %.80s\n", time.Since(t0).Round(time.Millisecond), (cpuTime() - c0).Round(time.Millisecond), first)
		return res, err
	}
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
