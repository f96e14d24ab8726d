#!/bin/bash
# Paired before/after runs of the box benchmarks, alternating in one
# session so the shared machine's noise hits both alike. Build the two
# test binaries first, e.g.:
#   git worktree add /tmp/wt-before 0644c60 && (cd /tmp/wt-before && go test -c -o /tmp/before.test ./sandbox)
#   go test -c -o /tmp/after.test ./sandbox
#   bash bench/box-before-after.sh > /tmp/pairbench.log
# BEFORE and AFTER name other binaries; REF names an optional third one
# run in the same rounds (e.g. the box before a feature both lack);
# ROUNDS sets the rounds (6). The raw lines come first, then each
# figure's median per binary and the after ÷ before ratio taken within
# each round (median and range).
before=${BEFORE:-/tmp/before.test} after=${AFTER:-/tmp/after.test}
bins="before=$before after=$after"
[ -n "$REF" ] && bins="ref=$REF $bins"
log=$(mktemp)
cd /tmp
for i in $(seq "${ROUNDS:-6}"); do
  for pair in $bins; do
    w=${pair%%=*} bin=${pair#*=}
    echo "== $w round $i load $(cut -d' ' -f1 /proc/loadavg)"
    nice -n -15 "$bin" -test.run '^$' -test.bench 'BenchmarkExecTrue/(bare-exec|sandgate-box|sandgate-box-start|sandgate-box-start-ready)$' -test.benchtime=200x 2>&1 | grep Benchmark
    SANDGATE_BENCH_FILES=1000,10000 nice -n -15 "$bin" -test.run '^$' -test.bench 'BenchmarkWorkspace/.*/sandgate-overlay' -test.benchtime=20x 2>&1 | grep Benchmark
  done
done | tee "$log"
echo
echo "== summary (ms; ratio = after ÷ before within each round)"
awk '/^== /{w=$2; r=$4; next} /^Benchmark/{n=$1; sub(/-[0-9]+$/, "", n); print n, w, r, $3/1e6}' "$log" |
  sort -k1,1 -k2,2 -k3,3n | awk '
    { v[$1" "$2]=v[$1" "$2]" "$4; r[$1" "$2" "$3]=$4; names[$1]=1; rounds[$3]=1 }
    function med(s,   a, n, i, j, t) {
      n = split(s, a, " ")
      for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
      return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
    }
    END {
      for (n in names) {
        line = n
        for (w in v) if (index(w, n" ") == 1) line = line sprintf("  %s %.2f", substr(w, length(n) + 2), med(v[w]))
        rs = ""; lo = 1e9; hi = 0
        for (k in rounds) if ((n" before "k) in r && (n" after "k) in r) {
          q = r[n" after "k] / r[n" before "k]; rs = rs " " q; if (q < lo) lo = q; if (q > hi) hi = q
        }
        if (rs != "") line = line sprintf("  after/before %.2f (%.2f-%.2f)", med(rs), lo, hi)
        print line
      }
    }' | sort
rm -f "$log"
