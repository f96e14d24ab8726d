package inbox_test

import (
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestAttackCandidateDiffsBounded: the agent writes the change, so it
// chooses each candidate's size: a 2 MiB diff, a little different at
// every one of 16 attempts, must not make a run page of tens of MiB (a
// person's browser freezes on it, and the server builds it at each
// view); nor may an agent's proposal.diff at each attempt, drawn in
// the live part that every open page fetches at each change. The page
// draws the newest up to a budget and links the rest.
func TestAttackCandidateDiffsBounded(t *testing.T) {
	w := newWorld(t, "")
	bigAttempts(t, filepath.Join(w.runs, "run-big"), "candidate.diff")
	bigAttempts(t, filepath.Join(w.runs, "run-proposals"), "proposal.diff")
	for _, p := range []string{"/run/0/run-big", "/run/0/run-proposals", "/run/0/run-proposals/live"} {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		resp, err := http.Get(w.ts.URL + p)
		must(t, err)
		var page strings.Builder
		n, _ := io.Copy(&page, resp.Body)
		resp.Body.Close()
		runtime.ReadMemStats(&after)
		t.Logf("%s: %d MiB, %d MiB allocated", p, n>>20, (after.TotalAlloc-before.TotalAlloc)>>20)
		if n > 16<<20 {
			t.Errorf("%s is %d MiB with 16 diffs of 2 MiB", p, n>>20)
		}
		// The newest is drawn, the oldest linked.
		file := strings.TrimPrefix(strings.TrimSuffix(p, "/live"), "/run/0/run-")
		file = map[string]string{"big": "candidate.diff", "proposals": "proposal.diff"}[file]
		if !strings.Contains(page.String(), "attempt 16") || !strings.Contains(page.String(), `/file/nodes/check/1/`+file+`"`) {
			t.Errorf("%s does not draw the newest diff and link the oldest", p)
		}
	}
}

// bigAttempts writes a failed run of 16 check attempts, each leaving a
// 2 MiB diff named file, a little different each time.
func bigAttempts(t *testing.T, dir, file string) {
	var j strings.Builder
	j.WriteString(`{"seq":1,"type":"run_started","time":"2026-01-02T03:04:05Z","run_id":"x","blueprint":"loop"}` + "\n")
	seq := 2
	line := "+" + strings.Repeat("x<", 60) + "\n"
	for n := 1; n <= 16; n++ {
		fmt.Fprintf(&j, `{"seq":%d,"type":"node_started","time":"2026-01-02T03:04:06Z","node":"check","attempt":%d}`+"\n", seq, n)
		fmt.Fprintf(&j, `{"seq":%d,"type":"node_finished","time":"2026-01-02T03:04:07Z","node":"check","attempt":%d,"outcome":"fail"}`+"\n", seq+1, n)
		seq += 2
		diff := fmt.Sprintf("diff --git a/f.go b/f.go\n--- a/f.go\n+++ b/f.go\n@@ -1 +1,99999 @@\n+attempt %d\n", n) + strings.Repeat(line, 2<<20/len(line))
		writeFile(t, filepath.Join(dir, "nodes", "check", fmt.Sprint(n), file), diff)
	}
	fmt.Fprintf(&j, `{"seq":%d,"type":"run_finished","status":"failed","reason":"x"}`+"\n"+`{"seq":%d,"type":"run_closed"}`+"\n", seq, seq+1)
	writeFile(t, filepath.Join(dir, "events.jsonl"), j.String())
}
