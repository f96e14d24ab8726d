package runtime_test

import (
	"context"
	"fmt"
	goruntime "runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sandgate/sandgate/blueprint"
	"github.com/sandgate/sandgate/runtime"
)

// noop is the cheapest possible node: the benchmark measures the engine.
type noop struct{}

func (noop) Run(context.Context, *runtime.Input) (*runtime.Result, error) {
	return &runtime.Result{Outcome: runtime.OutcomePass}, nil
}

func chainBlueprint(n int) string {
	var b strings.Builder
	b.WriteString("version: 1\nname: chain\nstart: n0\nnodes:\n")
	for i := 0; i < n; i++ {
		next := fmt.Sprintf("n%d", i+1)
		if i == n-1 {
			next = "done"
		}
		fmt.Fprintf(&b, "  n%d: {type: noop, next: %s}\n", i, next)
	}
	b.WriteString("  done: {type: succeed}\n")
	return b.String()
}

// BenchmarkChain reports engine time per node for chains of no-op nodes
// with the journal on, with and without fsync at node boundaries.
func BenchmarkChain(b *testing.B) {
	reg := runtime.NewRegistry()
	_ = reg.Register(runtime.Type{Spec: blueprint.NodeType{Name: "noop"},
		New: func(*blueprint.Node) (runtime.Node, error) { return noop{}, nil }})
	for _, n := range []int{10, 100, 1000} {
		bp, err := blueprint.Parse("chain.yaml", []byte(chainBlueprint(n)), blueprint.WithTypes(reg))
		if err != nil {
			b.Fatal(err)
		}
		for _, sync := range []bool{false, true} {
			b.Run(fmt.Sprintf("nodes=%d/fsync=%v", n, sync), func(b *testing.B) {
				rt := &runtime.Runtime{Registry: reg, RunsDir: b.TempDir(), NoSync: !sync}
				ws := b.TempDir()
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					sum, err := rt.Run(context.Background(), bp, runtime.RunOptions{Workspace: ws})
					if err != nil || sum.Status != runtime.StatusSucceeded {
						b.Fatalf("%v %v", err, sum)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n)/1e3, "µs/node")
			})
		}
	}
}

// BenchmarkConcurrentRuns starts many 5-node runs at once in one process
// and reports runs per second and heap bytes per run.
func BenchmarkConcurrentRuns(b *testing.B) {
	reg := runtime.NewRegistry()
	_ = reg.Register(runtime.Type{Spec: blueprint.NodeType{Name: "noop"},
		New: func(*blueprint.Node) (runtime.Node, error) { return noop{}, nil }})
	bp, err := blueprint.Parse("chain.yaml", []byte(chainBlueprint(5)), blueprint.WithTypes(reg))
	if err != nil {
		b.Fatal(err)
	}
	const runs = 1000
	rt := &runtime.Runtime{Registry: reg, RunsDir: b.TempDir(), NoSync: true}
	ws := b.TempDir()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var before, after goruntime.MemStats
		goruntime.GC()
		goruntime.ReadMemStats(&before)
		var wg sync.WaitGroup
		start := time.Now()
		for r := 0; r < runs; r++ {
			wg.Add(1)
			go func(r int) {
				defer wg.Done()
				sum, err := rt.Run(context.Background(), bp, runtime.RunOptions{Workspace: ws, RunID: fmt.Sprintf("r%d-%d", i, r)})
				if err != nil || sum.Status != runtime.StatusSucceeded {
					b.Error(err)
				}
			}(r)
		}
		wg.Wait()
		elapsed := time.Since(start)
		goruntime.ReadMemStats(&after)
		b.ReportMetric(float64(runs)/elapsed.Seconds(), "runs/s")
		b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/runs, "alloc-B/run")
	}
}
