#!/bin/bash
# Before/after of what a gate costs over its own command (issue 23's judge
# box): bench/gatecost built from two commits, run in turn so the shared
# machine's noise hits both alike. Build the two binaries first, e.g.:
#   git worktree add --detach /tmp/wt-before 9be08e6
#   mkdir -p /tmp/wt-before/bench/gatecost && cp bench/gatecost/main.go /tmp/wt-before/bench/gatecost/
#   (cd /tmp/wt-before && go build -o /tmp/gatecost-before ./bench/gatecost)
#   go build -o /tmp/gatecost-after ./bench/gatecost
#   bash bench/gatecost.sh [rounds] [files]
# Prints each side's median shell-node and gate times (ms, from the run's
# journal) and the median of the per-round after/before gate ratios.
rounds=${1:-6}; files=${2:-10000}
tmp=$(mktemp -d)
for i in $(seq "$rounds"); do
  for w in before after; do
    /tmp/gatecost-$w -runs 2 -gates 3 -files "$files" | tee -a "$tmp/$w" > "$tmp/$w.$i"
  done
done
med() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
gates() { tr ' ' '\n' < "$1" | grep '^gate' | cut -d= -f2; }
for w in before after; do
  echo "$w: shell $(tr ' ' '\n' < "$tmp/$w" | grep '^shell' | cut -d= -f2 | med) ms, gate $(gates "$tmp/$w" | med) ms (min $(gates "$tmp/$w" | sort -n | head -1), max $(gates "$tmp/$w" | sort -n | tail -1)), $(gates "$tmp/$w" | wc -l) gates"
done
for i in $(seq "$rounds"); do
  echo "$(gates "$tmp/after.$i" | med) $(gates "$tmp/before.$i" | med)" | awk '{printf "%.2f\n", $1/$2}'
done | med | sed 's/^/median per-round ratio after\/before: /'
rm -rf "$tmp"
