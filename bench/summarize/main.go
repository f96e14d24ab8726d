// Command summarize turns `go test -bench` output into the README's
// performance tables: medians with min-max over repeated runs, and ratios
// between the rows measured side by side.
package main

import (
	"bufio"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

var lineRE = regexp.MustCompile(`^(Benchmark\S+?)(?:-\d+)?\s+\d+\s+(.*)$`)

// samples maps a benchmark name to each metric's values.
type samples map[string]map[string][]float64

func parse() samples {
	s := samples{}
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		m := lineRE.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		f := strings.Fields(m[2])
		for i := 0; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				continue
			}
			if s[m[1]] == nil {
				s[m[1]] = map[string][]float64{}
			}
			s[m[1]][f[i+1]] = append(s[m[1]][f[i+1]], v)
		}
	}
	return s
}

func stats(v []float64) (med, lo, hi float64) {
	if len(v) == 0 {
		return 0, 0, 0
	}
	c := append([]float64(nil), v...)
	sort.Float64s(c)
	return c[len(c)/2], c[0], c[len(c)-1]
}

func (s samples) med(name, metric string) float64 {
	m, _, _ := stats(s[name][metric])
	return m
}

func dur(ns float64) string {
	switch {
	case ns >= 1e9:
		return fmt.Sprintf("%.2f s", ns/1e9)
	case ns >= 1e6:
		return fmt.Sprintf("%.1f ms", ns/1e6)
	case ns >= 1e3:
		return fmt.Sprintf("%.1f µs", ns/1e3)
	}
	return fmt.Sprintf("%.0f ns", ns)
}

func cell(s samples, name, metric string, f func(float64) string) string {
	med, lo, hi := stats(s[name][metric])
	if len(s[name][metric]) == 0 {
		return "—"
	}
	return fmt.Sprintf("%s (%s–%s)", f(med), f(lo), f(hi))
}

func ratio(a, b float64) string {
	if a == 0 || b == 0 {
		return "—"
	}
	return fmt.Sprintf("%.2f×", a/b)
}

func main() {
	s := parse()
	fmt.Println("### Engine overhead per node (chain of no-op nodes, journal and tracing on)")
	fmt.Println("| nodes | fsync | per node | allocs/run | bytes/run |")
	fmt.Println("|---|---|---|---|---|")
	for _, n := range []string{"10", "100", "1000"} {
		for _, sync := range []string{"false", "true"} {
			name := fmt.Sprintf("BenchmarkChain/nodes=%s/fsync=%s", n, sync)
			fmt.Printf("| %s | %s | %s | %.0f | %.0f |\n", n, sync, cell(s, name, "µs/node", func(v float64) string { return fmt.Sprintf("%.1f µs", v) }),
				s.med(name, "allocs/op"), s.med(name, "B/op"))
		}
	}
	g := s.med("BenchmarkChain/nodes=1000/fsync=false", "ns/op") / s.med("BenchmarkChain/nodes=100/fsync=false", "ns/op")
	fmt.Printf("\nGrowth from 100 to 1,000 nodes (no fsync): %.1f× the time for 10× the nodes.\n\n", g)

	fmt.Println("### Confined exec of `true`")
	fmt.Println("| method | time | vs bare exec |")
	fmt.Println("|---|---|---|")
	bare := s.med("BenchmarkExecTrue/bare-exec", "ns/op")
	for _, m := range []string{"bare-exec", "sandgate-box", "unshare", "bwrap", "sandgate-box-start"} {
		name := "BenchmarkExecTrue/" + m
		if len(s[name]) == 0 {
			continue
		}
		fmt.Printf("| %s | %s | %s |\n", m, cell(s, name, "ns/op", dur), ratio(s.med(name, "ns/op"), bare))
	}
	box := s.med("BenchmarkExecTrue/sandgate-box", "ns/op")
	fmt.Printf("\nsandgate vs unshare: %s; bwrap vs sandgate: %s.\n\n", ratio(box, s.med("BenchmarkExecTrue/unshare", "ns/op")), ratio(s.med("BenchmarkExecTrue/bwrap", "ns/op"), box))

	fmt.Println("### Workspace ready to run a command")
	fmt.Println("| files | sandgate (overlay box) | git worktree add | cp -r | worktree ÷ sandgate |")
	fmt.Println("|---|---|---|---|---|")
	var sizes []int
	for name := range s {
		var n int
		if _, err := fmt.Sscanf(name, "BenchmarkWorkspace/files=%d/", &n); err == nil && !contains(sizes, n) {
			sizes = append(sizes, n)
		}
	}
	sort.Ints(sizes)
	for _, n := range sizes {
		p := fmt.Sprintf("BenchmarkWorkspace/files=%d/", n)
		fmt.Printf("| %d | %s | %s | %s | %s |\n", n, cell(s, p+"sandgate-overlay", "ns/op", dur), cell(s, p+"git-worktree-add", "ns/op", dur),
			cell(s, p+"cp-r", "ns/op", dur), ratio(s.med(p+"git-worktree-add", "ns/op"), s.med(p+"sandgate-overlay", "ns/op")))
	}
	fmt.Println()
	fmt.Println("### Concurrency, validation, egress")
	fmt.Println("| figure | value |")
	fmt.Println("|---|---|")
	fmt.Printf("| 1,000 concurrent 5-node runs | %s runs/s, %s allocated per run |\n",
		cell(s, "BenchmarkConcurrentRuns", "runs/s", func(v float64) string { return fmt.Sprintf("%.0f", v) }),
		cell(s, "BenchmarkConcurrentRuns", "alloc-B/run", func(v float64) string { return fmt.Sprintf("%.0f KB", v/1024) }))
	fmt.Printf("| parse + validate a 1,000-node blueprint | %s |\n", cell(s, "BenchmarkValidate1000Nodes", "ns/op", dur))
	d, p := s.med("BenchmarkProxy/direct", "ns/op"), s.med("BenchmarkProxy/proxy", "ns/op")
	fmt.Printf("| 64 KiB GET direct / through the allowlist proxy | %s / %s (%s) |\n", cell(s, "BenchmarkProxy/direct", "ns/op", dur), cell(s, "BenchmarkProxy/proxy", "ns/op", dur), ratio(p, d))
}

func contains(s []int, n int) bool {
	for _, v := range s {
		if v == n {
			return true
		}
	}
	return false
}
