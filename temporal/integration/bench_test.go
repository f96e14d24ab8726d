package integration

import (
	"context"
	"fmt"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/sandgate/sandgate/runtime"
	"github.com/sandgate/sandgate/temporal"
	"github.com/sandgate/sandgate/temporal/internal/testnodes"
)

// benchNodes is the chain length of the overhead benchmarks.
const benchNodes = 5

// BenchmarkNodeOverhead runs a five-node chain of no-op nodes one run at
// a time, locally and on Temporal (one worker host), and reports the
// harness's time per node: what running on Temporal adds to every node.
//
//	(cd temporal/integration && go test -run '^$' -bench . -benchtime 20x)
func BenchmarkNodeOverhead(b *testing.B) {
	src := testnodes.Chain(benchNodes)
	b.Run("local", func(b *testing.B) {
		reg := testnodes.Registry()
		bp, err := reg.Parse("bp.yaml", []byte(src))
		if err != nil {
			b.Fatal(err)
		}
		rt := &runtime.Runtime{Registry: reg, RunsDir: b.TempDir(), NoSync: true}
		ws := b.TempDir()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			sum, err := rt.Run(context.Background(), bp, runtime.RunOptions{Workspace: ws, RunID: fmt.Sprint(i)})
			if err != nil || sum.Status != runtime.StatusSucceeded {
				b.Fatalf("%v %v", sum, err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*benchNodes), "µs/node")
	})
	b.Run("temporal", func(b *testing.B) {
		c := dial(b)
		startHost(b, c, "bench-seq", "bench-seq", false)
		ws := b.TempDir()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if st := result(b, start(b, c, "bench-seq", src, temporal.RunInput{Repo: ws})); st.Status != runtime.StatusSucceeded {
				b.Fatalf("%+v", st)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*benchNodes), "µs/node")
	})
}

// BenchmarkRunsPerSecond starts 20 five-node runs at once per iteration
// on two worker hosts and reports finished runs per second.
func BenchmarkRunsPerSecond(b *testing.B) {
	const batch = 20
	c := dial(b)
	startHost(b, c, "bench-par", "bench-p1", false)
	startHost(b, c, "bench-par", "bench-p2", false)
	src := testnodes.Chain(benchNodes)
	ws := b.TempDir()
	b.ResetTimer()
	t0 := time.Now()
	for i := 0; i < b.N; i++ {
		runs := make([]client.WorkflowRun, 0, batch)
		for j := 0; j < batch; j++ {
			runs = append(runs, start(b, c, "bench-par", src, temporal.RunInput{Repo: ws}))
		}
		for _, r := range runs {
			if st := result(b, r); st.Status != runtime.StatusSucceeded {
				b.Fatalf("%+v", st)
			}
		}
	}
	b.ReportMetric(float64(b.N*batch)/time.Since(t0).Seconds(), "runs/s")
}
