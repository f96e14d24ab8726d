//go:build unix

package inbox_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/sandgate/sandgate/inbox"
	"github.com/sandgate/sandgate/internal/browsertest"
)

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
