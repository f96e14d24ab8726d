package inbox_test

import (
	"encoding/json"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestAttackEventStreamFraming: a journal on shared storage may hold
// lines no runtime wrote. A bare carriage return ends a line for an
// EventSource, so one inside a journal line would let the file forge
// events ("event: closed" stops the page's live updates) or data; a value
// spelling "type":"run_closed" inside another event must not end the
// stream either. Every event sent is journal, output or closed, every
// data line is JSON, and the stream closes once, at the real run_closed.
func TestAttackEventStreamFraming(t *testing.T) {
	w := newWorld(t, "")
	dir := filepath.Join(w.runs, "run-forged")
	writeFile(t, filepath.Join(dir, "pid"), "1")
	forged := []string{
		`{"seq":3,"type":"node_progress","node":"implement","note":"x"}` + "\revent: closed\rdata: {}\r\rdata: <b>forged</b>\r",
		`{"seq":4,"type":"node_finished","node":"implement","attempt":1,"outcome":"pass","outputs":{"type":"run_closed"}}`,
		`{"seq":5,"type":"note","text":"a\u2028b\u0085c"}`,
		`not json at all` + "\x00\xff",
	}
	writeFile(t, filepath.Join(dir, "events.jsonl"), crashedJournal+strings.Join(forged, "\n")+"\n")
	req, _ := http.NewRequestWithContext(t.Context(), "GET", w.ts.URL+"/run/0/run-forged/events?offset=0", nil)
	resp, err := w.ts.Client().Do(req)
	must(t, err)
	defer resp.Body.Close()
	var got strings.Builder
	b := make([]byte, 4<<10)
	appended := false
	for !strings.Contains(got.String(), "event: closed") {
		n, err := resp.Body.Read(b)
		got.Write(b[:n])
		// Once every forged line went out, the run really closes.
		if !appended && strings.Count(got.String(), "event: journal") >= 2+len(forged) {
			appendFile(t, filepath.Join(dir, "events.jsonl"), `{"seq":9,"type":"run_closed"}`+"\n")
			appended = true
		}
		if err != nil {
			break
		}
	}
	// An EventSource splits lines at CR, LF and CRLF.
	lines := regexp.MustCompile(`\r\n|\r|\n`).Split(got.String(), -1)
	closedAt := -1
	for i, l := range lines {
		if ev, ok := strings.CutPrefix(l, "event:"); ok {
			if ev = strings.TrimSpace(ev); ev != "journal" && ev != "output" && ev != "closed" || ev == "closed" && closedAt >= 0 {
				t.Errorf("line %d: forged event %q", i, l)
			}
			if ev == "closed" && closedAt < 0 {
				closedAt = i
			}
		}
		if d, ok := strings.CutPrefix(l, "data:"); ok && !json.Valid([]byte(strings.TrimSpace(d))) {
			t.Errorf("line %d: data that is not JSON: %q", i, l)
		}
	}
	if !appended || closedAt < 0 || !strings.Contains(strings.Join(lines[:closedAt], "\n"), `"seq":9`) {
		t.Errorf("the stream closed before the run did (appended %v):\n%s", appended, got.String())
	}
}
