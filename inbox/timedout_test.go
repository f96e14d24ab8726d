package inbox_test

import (
	"path/filepath"
	"regexp"
	"testing"
)

// TestRunPageSaysTimedOut: the run page marks the attempt the runtime
// stopped at its timeout by the journal's record; an attempt whose own
// feedback reads the same is not marked.
func TestRunPageSaysTimedOut(t *testing.T) {
	w := newWorld(t, "")
	dir := filepath.Join(w.runs, "run-slow")
	writeFile(t, filepath.Join(dir, "events.jsonl"), `{"seq":1,"time":"2026-01-02T03:04:05Z","type":"run_started","run_id":"run-slow","blueprint":"loop"}
{"seq":2,"time":"2026-01-02T03:04:05Z","type":"node_started","node":"gate","attempt":1}
{"seq":3,"time":"2026-01-02T03:04:06Z","type":"node_finished","node":"gate","attempt":1,"outcome":"fail","feedback":"node gate timed out after 1s","duration_ms":1000,"timed_out":true}
{"seq":4,"time":"2026-01-02T03:04:06Z","type":"node_started","node":"gate","attempt":2}
{"seq":5,"time":"2026-01-02T03:04:07Z","type":"node_finished","node":"gate","attempt":2,"outcome":"fail","feedback":"node gate timed out after 1s","duration_ms":900}
{"seq":6,"time":"2026-01-02T03:04:07Z","type":"run_finished","status":"failed","kind":"fail","reason":"reached no"}
`)
	_, page := get(t, w.ts.Client(), w.ts.URL+"/run/0/run-slow")
	if !regexp.MustCompile(`gate #1 <span class="muted">[^<]* · timed out`).MatchString(page) {
		t.Errorf("the timed-out attempt is not marked:\n%s", page)
	}
	if regexp.MustCompile(`gate #2 <span class="muted">[^<]*timed out`).MatchString(page) {
		t.Errorf("the attempt that failed by its own verdict is marked timed out:\n%s", page)
	}
}
