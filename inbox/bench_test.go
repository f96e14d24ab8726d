package inbox_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sandgate/sandgate/inbox"
	"github.com/sandgate/sandgate/inbox/index"
	"github.com/sandgate/sandgate/internal/browsertest"
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

// BenchmarkNavCountStreams holds 20 list pages' live streams open over a
// queue of 2,000 review entries for a second per iteration and reports
// the server's CPU time per second: each stream checks the nav's counts
// every poll (250 ms), and counting reads every entry.
func BenchmarkNavCountStreams(b *testing.B) {
	base := b.TempDir()
	runs, reviews := filepath.Join(base, "runs"), filepath.Join(base, "reviews")
	newSeed(b).run(b, runs, "run-1", loopBP("loop", "step", "[pass]"))
	for i := range 2000 {
		writeFile(b, filepath.Join(reviews, fmt.Sprintf("rev-%04d", i), "entry.json"),
			fmt.Sprintf(`{"id":"rev-%04d","title":"t","branch":"b","commit":"c","base":"d","status":"pending","created":"2026-01-02T03:04:05Z"}`, i))
	}
	srv, err := inbox.New(inbox.Options{RunsDirs: []string{runs}, ReviewDirs: []string{reviews}, Poll: 250 * time.Millisecond, MaxStreams: 64})
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Index().Close()
	ts := httptest.NewServer(srv)
	defer browsertest.CloseServer(ts)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for range 20 {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, ts.URL+"/events", nil)
		resp, err := ts.Client().Do(req)
		if err != nil {
			b.Fatal(err)
		}
		defer resp.Body.Close()
		go func() { _, _ = io.Copy(io.Discard, resp.Body) }()
	}
	var cpu time.Duration
	b.ResetTimer()
	for range b.N {
		before := cpuTime()
		time.Sleep(time.Second)
		cpu += cpuTime() - before
	}
	b.ReportMetric(float64(cpu.Milliseconds())/float64(b.N), "cpu-ms/s")
}

// cpuTime is this process's user and system time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
