package inbox_test

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestAttackBadRunJSONNotReadEveryTime: a run whose run.json does not
// parse (malformed, nested a million deep, a number out of range, a
// directory) must be read once like any other run, not again on every
// request: where a refresh stats every run (no inotify, shared storage)
// one such run with a long journal made every page of the runs list
// re-read and fold it.
func TestAttackBadRunJSONNotReadEveryTime(t *testing.T) {
	w := newWorld(t, "")
	// As without inotify (another system, the watch limit reached, runs
	// on shared storage): each refresh stats every run.
	w.srv.Index().FullScan = -1
	var j strings.Builder
	j.WriteString(`{"seq":1,"type":"run_started","time":"2026-01-02T03:04:05Z","run_id":"x","blueprint":"loop"}` + "\n")
	for i := 2; j.Len() < 4<<20; i++ {
		fmt.Fprintf(&j, `{"seq":%d,"type":"node_started","time":"2026-01-02T03:04:06Z","node":"implement","attempt":1}`+"\n", i)
	}
	j.WriteString(`{"seq":999999,"type":"run_finished","status":"failed","reason":"x"}` + "\n" + `{"seq":1000000,"type":"run_closed"}` + "\n")
	bad := map[string]string{"malformed": `{"cost":`, "deep": strings.Repeat("[", 1<<20), "range": `{"duration_ms":1e300}`}
	for name, runJSON := range bad {
		dir := filepath.Join(w.runs, "run-"+name)
		writeFile(t, filepath.Join(dir, "events.jsonl"), j.String())
		writeFile(t, filepath.Join(dir, "run.json"), runJSON)
	}
	must(t, os.MkdirAll(filepath.Join(w.runs, "run-dir", "run.json"), 0o755))
	writeFile(t, filepath.Join(w.runs, "run-dir", "events.jsonl"), j.String())
	c := &http.Client{}
	if code, page := get(t, c, w.ts.URL+"/"); code != 200 || !strings.Contains(page, "run-deep") {
		t.Fatalf("the runs list with bad run.json files: %d", code)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range 3 {
		get(t, c, w.ts.URL+"/?q=x")
	}
	runtime.ReadMemStats(&after)
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 16<<20 {
		t.Errorf("3 requests of an unchanged runs list allocated %d MiB: runs with a bad run.json are read again each time", grew>>20)
	}
}
