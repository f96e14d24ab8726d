#!/bin/sh
# sidebyside.sh: the canary bench of two builds of sandgate, alternating,
# one round at a time, so that both meet the same load. Each build is the
# bench/canary program built from a checkout:
#
#	(cd <before checkout> && go build -o /tmp/before ./bench/canary)
#	go build -o /tmp/after ./bench/canary
#	sh bench/canary/sidebyside.sh /tmp/before /tmp/after ROUNDS -repo DIR -change FILE PACKAGE...
#
# Every round runs before and after (swapped each round), each with its
# plain and canaried arm (plain first), and prints the four times; then
# the medians and ratios. AFTER_FLAGS go to the after build alone (flags
# the before build does not know). Run it under the heavy lock.
set -e
before=$1 after=$2 rounds=$3
shift 3
log=$(mktemp)
# A warm-up round of each build (untimed) fills the caches both share.
"$before" -runs 0 -arms plain,canary "$@" >/dev/null 2>&1
"$after" -runs 0 -arms plain,canary $AFTER_FLAGS "$@" >/dev/null 2>&1
r=1
while [ "$r" -le "$rounds" ]; do
	if [ $((r % 2)) -eq 1 ]; then order="before after"; else order="after before"; fi
	for which in $order; do
		bin=$before flags=
		[ "$which" = after ] && bin=$after flags=$AFTER_FLAGS
		"$bin" -runs 1 -warmup=false -arms plain,canary -phases $flags "$@" 2>&1 >/dev/null |
			sed -n "s/^round 0 \([a-z-]*\) *\([0-9.ms]*\) cpu \([0-9.ms]*\) .*/$which \1 \2 \3/p; s/^round 0 \([a-z-]*\) *\([0-9.ms]*\) .*/$which \1 \2/p; s/^  \(.*\)/$which   \1/p" | tee -a "$log"
	done
	echo "round $r done, $(uptime)"
	r=$((r + 1))
done
sum=$(mktemp -d)
cat > "$sum/main.go" <<'GO'
package main

import (
	"bufio"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"
)

func main() {
	f, _ := os.Open(os.Args[1])
	t := map[string][]time.Duration{}
	s := bufio.NewScanner(f)
	for s.Scan() {
		w := strings.Fields(s.Text())
		if len(w) >= 3 && (w[1] == "plain" || w[1] == "canary") {
			if d, err := time.ParseDuration(w[2]); err == nil {
				t[w[0]+" "+w[1]] = append(t[w[0]+" "+w[1]], d)
			}
			if len(w) == 4 {
				if d, err := time.ParseDuration(w[3]); err == nil {
					t[w[0]+" cpu"+w[1]] = append(t[w[0]+" cpu"+w[1]], d)
				}
			}
		}
	}
	med := func(v []time.Duration) time.Duration {
		d := slices.Clone(v)
		slices.Sort(d)
		if len(d) == 0 {
			return 0
		}
		return d[len(d)/2]
	}
	fmt.Println("| build | plain | canaried | canaried ÷ plain (of the medians) | ÷ plain, per round |")
	fmt.Println("|---|---|---|---|---|")
	for _, b := range []string{"before", "after", "before cpu", "after cpu"} {
		b, cpu, _ := strings.Cut(b, " ")
		p, c := t[b+" "+cpu+"plain"], t[b+" "+cpu+"canary"]
		if len(p) == 0 || len(c) == 0 {
			continue
		}
		if cpu != "" {
			b += " (CPU time)"
		}
		var per []string
		for i := range min(len(p), len(c)) {
			per = append(per, fmt.Sprintf("%.2f", float64(c[i])/float64(p[i])))
		}
		mp, mc := med(p), med(c)
		fmt.Printf("| %s | %s (%s–%s) | %s (%s–%s) | %.2f× | %s |\n", b,
			mp.Round(time.Millisecond), slices.Min(p).Round(time.Millisecond), slices.Max(p).Round(time.Millisecond),
			mc.Round(time.Millisecond), slices.Min(c).Round(time.Millisecond), slices.Max(c).Round(time.Millisecond),
			float64(mc)/float64(mp), strings.Join(per, " "))
	}
}
GO
go run "$sum/main.go" "$log"
rm -rf "$log" "$sum"
