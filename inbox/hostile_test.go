//go:build unix

package inbox_test

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
)

// TestHostileRunFilesNeitherHangNorExhaust: a runs directory on shared
// storage may hold a run whose files are FIFOs (an open for reading waits
// for a writer that never comes) or huge sparse files. Every page must
// still answer, and no read may pull a whole huge file into memory.
func TestHostileRunFilesNeitherHangNorExhaust(t *testing.T) {
	w := newWorld(t, "")
	src := filepath.Join(w.runs, "run-handoff")
	fifoRun := filepath.Join(w.runs, "run-fifo")
	for _, f := range []string{"events.jsonl", "blueprint.yaml"} {
		b, err := os.ReadFile(filepath.Join(src, f))
		must(t, err)
		writeFile(t, filepath.Join(fifoRun, f), string(b))
	}
	for _, f := range []string{"run.json", "meta.json", "verify.json", "handoff.md", "audit.log", "commands.jsonl",
		"alerts.jsonl", "trace.json", "nodes/check/1/transcript.jsonl", "nodes/check/1/x.log"} {
		must(t, os.MkdirAll(filepath.Dir(filepath.Join(fifoRun, f)), 0o755))
		must(t, syscall.Mkfifo(filepath.Join(fifoRun, f), 0o644))
	}
	// A run whose journal itself is a FIFO: the list skips it, its page
	// must not wait on it.
	must(t, os.MkdirAll(filepath.Join(w.runs, "run-fifojournal"), 0o755))
	must(t, syscall.Mkfifo(filepath.Join(w.runs, "run-fifojournal", "events.jsonl"), 0o644))
	// A review entry made of FIFOs.
	for _, f := range []string{"entry.json", "summary.md", "diff.patch", "verify.json"} {
		must(t, os.MkdirAll(filepath.Join(w.reviews, "rev-fifo"), 0o755))
		must(t, syscall.Mkfifo(filepath.Join(w.reviews, "rev-fifo", f), 0o644))
	}
	// Huge sparse files where the index and the pages read whole files.
	sparse := filepath.Join(w.runs, "run-sparse")
	must(t, os.MkdirAll(sparse, 0o755))
	b, err := os.ReadFile(filepath.Join(src, "events.jsonl"))
	must(t, err)
	writeFile(t, filepath.Join(sparse, "events.jsonl"), string(b))
	for _, f := range []string{"run.json", "meta.json"} {
		fh, err := os.Create(filepath.Join(sparse, f))
		must(t, err)
		must(t, fh.Truncate(1<<30))
		fh.Close()
	}

	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	// No client timeout: a page that hangs on a FIFO never answers, and
	// go test's -timeout names the request it hung in.
	c := &http.Client{}
	for _, p := range []string{"/", "/handoffs", "/reviews", "/run/0/run-fifo", "/run/0/run-fifo/live",
		"/run/0/run-fifo/file/run.json", "/run/0/run-fifo/file/nodes/check/1/x.log", "/run/0/run-fifojournal",
		"/run/0/run-fifojournal/live", "/review/0/rev-fifo", "/run/0/run-sparse"} {
		resp, err := c.Get(w.ts.URL + p)
		if err != nil {
			t.Errorf("%s: %v (a FIFO in the run hung the server)", p, err)
			continue
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	req, _ := http.NewRequestWithContext(t.Context(), "GET", w.ts.URL+"/run/0/run-fifojournal/events", nil)
	if resp, err := http.DefaultClient.Do(req); err != nil {
		t.Errorf("events stream of a FIFO journal: %v", err)
	} else {
		resp.Body.Close()
	}
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 512<<20 {
		t.Errorf("the pages allocated %d MiB for a run with 1 GiB sparse files: reads are not bounded", grew>>20)
	}
}
