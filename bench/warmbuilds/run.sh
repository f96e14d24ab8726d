#!/bin/bash
# Warm builds side by side on a real repository: the same go vet in the
# agent's box (node vet) and in a judge box (lint gate), with cold builds
# (--cold-builds) and warm ones (the first run on a commit warms the
# harness's cache; the second finds it warm), then cold again.
#
#   go build -o /tmp/sg ./cmd/sandgate
#   SG=/tmp/sg bash bench/warmbuilds/run.sh /path/to/prometheus [./model/labels/...]
set -u
repo=$1; pkgs=${2:-./model/labels/...}; sg=${SG:-sandgate}
bp="$(cd "$(dirname "$0")" && pwd)/bench.yaml"
work=$(mktemp -d)
# A sandgate cache of its own (so the first run warms); the user's Go
# build cache as it is.
export GOCACHE=$(go env GOCACHE) XDG_CACHE_HOME=$work/cache
one() {
  local label=$1; shift
  local s=$(date +%s.%N)
  out=$($sg run "$bp" --repo "$repo" --runs-dir "$work/runs" --input packages="$pkgs" "$@" 2>&1)
  echo "== $label: total $(echo "$(date +%s.%N) - $s" | bc) s, load $(cut -d' ' -f1 /proc/loadavg)"
  echo "$out" | grep -E "warm|workspace ready|✓|✗|status:" | sed 's/^/   /'
}
one "cold" --cold-builds
one "warm, first run on the commit"
one "warm, second run"
one "cold again" --cold-builds
rm -rf "$work"
