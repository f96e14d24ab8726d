#!/usr/bin/env bash
# The performance suite: every figure side by side in one run, reported as
# medians with min-max over several runs and as ratios (this machine is
# shared and noisy; absolute times alone mislead).
#
#   bash bench/run.sh            # full suite (~10 min)
#   QUICK=1 bash bench/run.sh    # smaller sizes, fewer runs (~2 min)
set -euo pipefail
cd "$(dirname "$0")/.."
out=bench/results
mkdir -p "$out"
raw="$out/raw.txt"
: > "$raw"

if ! command -v bwrap >/dev/null 2>&1; then
  echo "installing bubblewrap for the exec comparison…" >&2
  (apt-get update -qq && apt-get install -y -qq bubblewrap) >/dev/null 2>&1 || echo "bubblewrap unavailable: its row is skipped" >&2
fi

count=5; wcount=3; files="1000,10000,50000"
if [ -n "${QUICK:-}" ]; then count=3; wcount=2; files="1000,10000"; fi

bench() { # package, regexp, count, benchtime
  echo "== go test -bench '$2' $1 (count $3)" >&2
  go test -run '^$' -bench "$2" -benchmem -count "$3" -benchtime "$4" "$1" | tee -a "$raw" | grep -E '^Benchmark' >&2 || true
}
bench ./runtime 'BenchmarkChain' "$count" 3x
bench ./runtime 'BenchmarkConcurrentRuns' "$count" 1x
bench ./blueprint 'BenchmarkValidate1000Nodes' "$count" 5x
bench ./sandbox 'BenchmarkExecTrue' "$count" 200x
bench ./sandbox 'BenchmarkProxy' "$count" 200x
SANDGATE_BENCH_FILES="$files" bench ./sandbox 'BenchmarkWorkspace' "$wcount" 1x

{
  echo "machine: $(nproc) cores, $(free -g | awk '/Mem:/{print $2}') GiB, $(uname -sr), $(go version | cut -d' ' -f3)"
  echo "command: bash bench/run.sh$( [ -n "${QUICK:-}" ] && echo ' (QUICK=1)')"
  echo "date: $(date -u +%Y-%m-%dT%H:%MZ)"
  echo
  go run ./bench/summarize < "$raw"
  echo
  echo "### Harness overhead per run: first run ever, same commit, new commit"
  echo "(go run ./bench/harness -runs $wcount \${SANDGATE_BENCH_REAL:+-real ...}: a one-line change, then diff_cap, git_commit, git_push to a --shared bare clone, clean-checkout ci running true, review; median (min–max); set SANDGATE_BENCH_REAL=name=/path,... to add real repositories)"
  echo
  go run ./bench/harness -runs "$wcount" ${SANDGATE_BENCH_REAL:+-real "$SANDGATE_BENCH_REAL"}
} | tee "$out/summary.md"
