package inbox_test

import (
	"io"
	"net/http"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestAttackRunningTranscriptHuge: a running agent writes a long
// transcript (hours of turns, or a model told to babble), and every open
// run page fetches the live fragment each time it grows. The fragment
// shows the transcript's last turns; it must read only about them, not
// decode the whole file on every refresh, and it must show the latest
// turn however long the transcript is.
func TestAttackRunningTranscriptHuge(t *testing.T) {
	w := newWorld(t, "")
	dir := filepath.Join(w.runs, "run-chatty")
	writeFile(t, filepath.Join(dir, "pid"), "1")
	writeFile(t, filepath.Join(dir, "events.jsonl"), crashedJournal)
	turn := `{"kind":"completion","data":{"role":"assistant","content":"` + strings.Repeat("blah ", 40) + `"}}` + "\n"
	var b strings.Builder
	for b.Len() < 40<<20 {
		b.WriteString(turn)
	}
	b.WriteString(`{"kind":"completion","data":{"role":"assistant","content":"the latest turn"}}` + "\n")
	writeFile(t, filepath.Join(dir, "nodes", "implement", "1", "transcript.jsonl"), b.String())
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	start := time.Now()
	resp, err := http.Get(w.ts.URL + "/run/0/run-chatty/live")
	must(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	took := time.Since(start)
	runtime.ReadMemStats(&after)
	t.Logf("live fragment: %v, %d MiB allocated", took, (after.TotalAlloc-before.TotalAlloc)>>20)
	if !strings.Contains(string(body), "the latest turn") {
		t.Errorf("the live fragment does not show the latest turn of a 40 MiB transcript")
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 24<<20 {
		t.Errorf("one live refresh allocated %d MiB for a 40 MiB transcript: it decodes the whole file each time", grew>>20)
	}
}
