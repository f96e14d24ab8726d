#!/bin/bash
# Paired before/after runs of the box benchmarks, alternating in one
# session so the shared machine's noise hits both alike. Build the two
# test binaries first, e.g.:
#   git worktree add /tmp/wt-before 0644c60 && (cd /tmp/wt-before && go test -c -o /tmp/before.test ./sandbox)
#   go test -c -o /tmp/after.test ./sandbox
#   bash bench/box-before-after.sh > /tmp/pairbench.log
# BEFORE and AFTER name other binaries; ROUNDS sets the rounds (6).
before=${BEFORE:-/tmp/before.test} after=${AFTER:-/tmp/after.test}
cd /tmp
for i in $(seq "${ROUNDS:-6}"); do
  for w in before after; do
    bin=$before; [ "$w" = after ] && bin=$after
    echo "== $w"
    nice -n -15 "$bin" -test.run '^$' -test.bench 'BenchmarkExecTrue/(bare-exec|sandgate-box|sandgate-box-start)$' -test.benchtime=200x 2>&1 | grep Benchmark
    SANDGATE_BENCH_FILES=1000,10000 nice -n -15 "$bin" -test.run '^$' -test.bench 'BenchmarkWorkspace/.*/sandgate-overlay' -test.benchtime=20x 2>&1 | grep Benchmark
  done
done
