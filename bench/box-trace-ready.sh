#!/bin/bash
# Alternating traced runs (SANDGATE_BOX_TRACE=1) of one box's Start with
# its spare init ready (BenchmarkExecTrue/sandgate-box-start-ready), for
# two test binaries built as for box-before-after.sh. Prints the load of
# each run, each binary's median Start (the harness's boxFor + startDisk
# + startInit) and the mean of each step init and its preparation took.
# ROUNDS (3) alternations of N (40) starts each.
before=${BEFORE:-/tmp/before.test} after=${AFTER:-/tmp/after.test}
raw=$(mktemp)
cd /tmp
for r in $(seq "${ROUNDS:-3}"); do
  for pair in before=$before after=$after; do
    w=${pair%%=*} bin=${pair#*=} l=$(cut -d' ' -f1 /proc/loadavg)
    echo "== $w round $r load $l"
    SANDGATE_BOX_TRACE=1 nice -n -15 "$bin" -test.run '^$' -test.bench 'BenchmarkExecTrue/sandgate-box-start-ready$' \
      -test.benchtime="${N:-40}x" 2>&1 | grep '^TRACE' | sed "s/^/$w /" >> "$raw"
  done
done
for w in before after; do
  awk -v w=$w '$1==w && $3=="start" {if ($4=="boxFor") n++; s[n]+=$5} END {for (i in s) print s[i]}' "$raw" | sort -n |
    awk -v w=$w '{a[NR]=$1} END {printf "%s Start: median %.2f ms, p25 %.2f, p75 %.2f (n=%d)\n", w, a[int((NR+1)/2)], a[int(NR/4)+1], a[int(3*NR/4)], NR}'
done
for w in before after; do
  echo "== $w: init's steps (mean ms)"
  awk -v w=$w '$1==w && ($3=="init" || $3=="prep") {k=$3" "$4; s[k]+=$5; n[k]++} END {for (k in s) printf "%-22s %6.3f\n", k, s[k]/n[k]}' "$raw" | sort
done
rm -f "$raw"
