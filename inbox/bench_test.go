package inbox_test

import (
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sandgate/sandgate/inbox"
	"github.com/sandgate/sandgate/inbox/index"
)

// seedMany makes n run directories: a few genuine runs, each copied under
// new ids (the files the index reads, with meta.json renamed).
func seedMany(b *testing.B, runs string, n int) {
	s := newSeed(b)
	var srcs []string
	for i, o := range []string{"[pass]", "[fail, pass]", "[fail]"} {
		id := fmt.Sprintf("src-%d", i)
		s.runWith(b, runs, id, taskBP(fmt.Sprintf("bp%d", i), o), map[string]any{"task": "Fix TestWORD in calc.go"})
		srcs = append(srcs, filepath.Join(runs, id))
	}
	for i := range n - len(srcs) {
		copyRun(b, srcs[i%len(srcs)], filepath.Join(runs, fmt.Sprintf("run-%05d", i)), "TestWORD", fmt.Sprintf("Test%05d", i))
	}
}

// copyRun copies the files the index reads of the run src as the run
// dst (its id renamed, and each old, new pair of replace replaced).
func copyRun(t testing.TB, src, dst string, replace ...string) {
	r := strings.NewReplacer(append([]string{filepath.Base(src), filepath.Base(dst)}, replace...)...)
	for _, f := range []string{"events.jsonl", "run.json", "blueprint.yaml", "meta.json"} {
		data, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(dst, f), r.Replace(string(data)))
	}
}

// BenchmarkRunsList10k serves the runs list over 10,000 runs: a filter on
// the id, a search for one word of one run's task, and a sort by cost, on
// a cached index and refreshing it on every request: by a full scan (a
// stat per run, as without inotify) and by following events (watched).
func BenchmarkRunsList10k(b *testing.B) {
	runs := filepath.Join(b.TempDir(), "runs")
	seedMany(b, runs, 10000)
	for _, mode := range []struct {
		name        string
		every, full int64
	}{{"refresh-every-request/scan", -1, -1}, {"refresh-every-request/watched", -1, 0}, {"cached-index", 1 << 40, 0}} {
		for _, v := range []struct{ name, query, want string }{
			{"list", "page=3&q=run-0", "run-0"},
			{"search", "q=test04321", "run-04321"},
			{"sort", "sort=cost&page=7", "run-"},
		} {
			b.Run(mode.name+"/"+v.name, func(b *testing.B) {
				srv, err := inbox.New(inbox.Options{RunsDirs: []string{runs}})
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(srv.Index().Close)
				srv.Index().FullScan = timeDur(mode.full)
				srv.Index().Refresh() // the one full read, at start
				srv.Index().Refresh() // a second: the watcher starts (scan only when FullScan < 0)
				srv.Index().MinRefresh = timeDur(mode.every)
				for b.Loop() {
					rec := httptest.NewRecorder()
					srv.ServeHTTP(rec, httptest.NewRequest("GET", "http://127.0.0.1/?"+v.query, nil))
					if rec.Code != 200 || !strings.Contains(rec.Body.String(), v.want) {
						b.Fatalf("%d %s", rec.Code, rec.Body.String())
					}
				}
			})
		}
	}
}

func BenchmarkRunPage1000Attempts(b *testing.B) {
	runs := filepath.Join(b.TempDir(), "runs")
	s := newSeed(b)
	outcomes := "[" + strings.Repeat("fail, ", 499) + "pass]"
	src := strings.Replace(loopBP("big", "step", outcomes), "max: 2", "max: 600", 1)
	sum := s.run(b, runs, "big", src)
	if sum.NodeRuns != 1000 {
		b.Fatalf("seeded %d attempts, want 1000", sum.NodeRuns)
	}
	srv, err := inbox.New(inbox.Options{RunsDirs: []string{runs}, Types: s.reg})
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, httptest.NewRequest("GET", "http://127.0.0.1/run/0/big", nil))
		if rec.Code != 200 {
			b.Fatalf("%d %s", rec.Code, rec.Body.String())
		}
	}
}

func timeDur(n int64) time.Duration { return time.Duration(n) }

// BenchmarkStats10k: `sandgate stats` over 10,000 runs, on an index
// already loaded (the aggregate alone) and with an incremental refresh
// first (what a repeated query in a long-lived process pays: a stat per
// run, no journal read), and from a cold index, as the one-shot CLI does.
func BenchmarkStats10k(b *testing.B) {
	runs := filepath.Join(b.TempDir(), "runs")
	seedMany(b, runs, 10000)
	ix := index.NewIndex(runs)
	ix.Refresh()
	if st := index.ComputeStats(ix.Runs(), index.StatsQuery{}); st.Runs != 10000 {
		b.Fatalf("indexed %d runs", st.Runs)
	}
	b.Run("aggregate", func(b *testing.B) {
		for b.Loop() {
			index.ComputeStats(ix.Runs(), index.StatsQuery{Blueprint: "bp1"})
		}
	})
	b.Run("cold-index", func(b *testing.B) { // the one-shot CLI: every journal read once
		for b.Loop() {
			index.ComputeStats(index.NewIndex(runs).Runs(), index.StatsQuery{})
		}
	})
	b.Run("refresh+aggregate", func(b *testing.B) {
		for b.Loop() {
			ix.Refresh()
			index.ComputeStats(ix.Runs(), index.StatsQuery{})
		}
	})
}
