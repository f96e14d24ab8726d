package inbox_test

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sandgate/sandgate/inbox"
	"github.com/sandgate/sandgate/internal/wait"
)

// crashedJournal is a run whose harness died in the middle of a node: no
// run_finished, no run_closed.
const crashedJournal = `{"seq":1,"type":"run_started","time":"2026-01-02T03:04:05Z","run_id":"run-crashed","blueprint":"loop"}
{"seq":2,"type":"node_started","time":"2026-01-02T03:04:06Z","node":"implement","attempt":1}
`

// deadPid is the pid of a process that has exited and been reaped.
func deadPid(t *testing.T) int {
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}

// TestCrashedRunShowsInterrupted: a run without run_finished whose pid file
// is missing or names a dead process is "interrupted (no process)" in the
// list, on its page and in its live stream (which ends rather than
// waiting forever); one whose process lives is running. The index also
// notices a harness that dies after it first read the run.
func TestCrashedRunShowsInterrupted(t *testing.T) {
	w := newWorld(t, "")
	dir := filepath.Join(w.runs, "run-crashed")
	writeFile(t, filepath.Join(dir, "events.jsonl"), crashedJournal)
	c := w.ts.Client()
	for _, tc := range []struct {
		name, pid, want string
	}{
		{"own process", strconv.Itoa(1), "running"}, // pid 1 lives: signalling it is allowed or EPERM
		{"dead process", strconv.Itoa(deadPid(t)), "interrupted"},
		{"no pid file", "", "interrupted"},
	} {
		if tc.pid != "" {
			writeFile(t, filepath.Join(dir, "pid"), tc.pid)
		} else if err := removeIfExists(filepath.Join(dir, "pid")); err != nil {
			t.Fatal(err)
		}
		_, page := get(t, c, w.ts.URL+"/run/0/run-crashed")
		_, list := get(t, c, w.ts.URL+"/?status="+tc.want)
		if !strings.Contains(page, `id="run-status">`+tc.want+`<`) || !strings.Contains(list, "run-crashed") {
			t.Errorf("%s: want %s on the page and in the list filtered by it\n%s", tc.name, tc.want, page)
		}
		if tc.want == "interrupted" && !strings.Contains(page, "no process") {
			t.Errorf("%s: the page does not say no process carries the run on", tc.name)
		}
	}
	// The stream of a run nobody carries on ends.
	resp, err := c.Get(w.ts.URL + "/run/0/run-crashed/events?offset=0")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	// The server ends the stream: reading it to the end returns. (Had it
	// stayed open, go test's -timeout would report the hang.)
	b, err := io.ReadAll(resp.Body)
	if got := string(b); err != nil || !strings.Contains(got, "event: closed") {
		t.Fatalf("the live stream of a dead run did not end:\n%s", got)
	}
}

// TestAnsweredRunIsRunningAgain: after an answered event the run is
// running again (not stuck on its old handed_off) and the page shows who
// answered and what.
func TestAnsweredRunIsRunningAgain(t *testing.T) {
	w := newWorld(t, "")
	dir := filepath.Join(w.runs, "run-handoff")
	writeFile(t, filepath.Join(dir, "pid"), "1")
	appendFile(t, filepath.Join(dir, "events.jsonl"), `{"seq":999,"type":"answered","time":"2026-01-02T03:04:05Z","node":"implement","feedback":"use `+jsonEsc(xss)+`","by":"ana"}`+"\n")
	_, page := get(t, w.ts.Client(), w.ts.URL+"/run/0/run-handoff")
	if !strings.Contains(page, `id="run-status">running<`) || !strings.Contains(page, "answered by <b>ana</b>") ||
		!strings.Contains(page, "use &lt;script&gt;") || !strings.Contains(page, "data-events=") {
		t.Fatalf("answered run page:\n%s", page)
	}
}

// TestActionErrorsShownEscaped: an action's error is a page that shows
// the error as text, with a way back; never a blank 500.
func TestActionErrorsShownEscaped(t *testing.T) {
	w := newWorld(t, "")
	w.acts.fail = errors.New("review rev-1 already decided: " + xss)
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar}
	tok := csrfOf(t, c, w.ts.URL+"/run/0/run-handoff")
	for _, p := range []struct {
		path string
		form url.Values
	}{
		{"/run/0/run-handoff/answer", url.Values{"node": {"implement"}, "note": {"x"}, "csrf": {tok}}},
		{"/review/0/rev-1/decide", url.Values{"verdict": {"approve"}, "confirm": {"yes"}, "csrf": {tok}}},
	} {
		resp, err := c.PostForm(w.ts.URL+p.path, p.form)
		if err != nil {
			t.Fatal(err)
		}
		body := readAll(resp)
		if resp.StatusCode != http.StatusInternalServerError || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") ||
			!strings.Contains(body, "already decided: &lt;script&gt;") || strings.Contains(body, "<script>alert") || !strings.Contains(body, ">back</a>") {
			t.Errorf("%s: %d %s\n%s", p.path, resp.StatusCode, resp.Header.Get("Content-Type"), body)
		}
	}
	resp, _ := c.PostForm(w.ts.URL+"/run/0/run-handoff/answer", url.Values{"node": {"implement"}, "note": {"  "}, "csrf": {tok}})
	if body := readAll(resp); resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, "no note") {
		t.Errorf("empty note: %d\n%s", resp.StatusCode, body)
	}
}

// TestHandoffsShowCLI: the hand-offs page gives a person at a shell the
// takeover commands and the `sandgate answer` line, escaped.
func TestHandoffsShowCLI(t *testing.T) {
	w := newWorld(t, "")
	dir := filepath.Join(w.runs, "run-handoff")
	writeFile(t, filepath.Join(dir, "handoff.json"), `{"takeover":["git -C /repo checkout -b sandgate/x abc","git -C /repo apply `+jsonEsc(xss)+`"],"fetch":["git fetch /srv/r.git fix"]}`)
	_, page := get(t, w.ts.Client(), w.ts.URL+"/handoffs")
	for _, want := range []string{"git -C /repo checkout -b sandgate/x abc", "apply &lt;script&gt;", "git fetch /srv/r.git fix",
		"sandgate answer " + dir + " --to implement --note"} {
		if !strings.Contains(page, want) {
			t.Errorf("hand-offs page lacks %q", want)
		}
	}
}

// TestLiveStreamsCapped: live streams hold a connection and poll a
// journal each, so opening them without end would exhaust the server;
// past MaxStreams a stream is refused with 503 (the browser retries), and
// a stream that ends frees its place.
func TestLiveStreamsCapped(t *testing.T) {
	w := newWorld(t, "")
	dir := filepath.Join(w.runs, "run-live")
	writeFile(t, filepath.Join(dir, "events.jsonl"), crashedJournal)
	writeFile(t, filepath.Join(dir, "pid"), "1") // pid 1 lives: the stream stays open
	srv, err := inbox.New(inbox.Options{RunsDirs: []string{w.runs}, Poll: 20e6, MaxStreams: 2})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close) // after the bodies' cleanups, which run first
	open := func() *http.Response {
		resp, err := ts.Client().Get(ts.URL + "/run/0/run-live/events?offset=0")
		if err != nil {
			t.Fatal(err)
		}
		// Closed on any exit, or ts.Close would wait on a live stream.
		t.Cleanup(func() { resp.Body.Close() })
		return resp
	}
	first, second := open(), open()
	for _, r := range []*http.Response{first, second} {
		if r.StatusCode != http.StatusOK {
			t.Fatalf("stream refused below the cap: %s", r.Status)
		}
		b := make([]byte, 64)
		if _, err := r.Body.Read(b); err != nil { // the stream is being served
			t.Fatal(err)
		}
	}
	third := open()
	third.Body.Close()
	if third.StatusCode != http.StatusServiceUnavailable || third.Header.Get("Retry-After") == "" {
		t.Fatalf("a stream over the cap: %s (Retry-After %q)", third.Status, third.Header.Get("Retry-After"))
	}
	first.Body.Close()
	wait.Until(t, "a closed stream freed its place", func() bool {
		r := open()
		r.Body.Close()
		return r.StatusCode == http.StatusOK
	})
}

// TestLiveStreamSurvivesLongLines: a journal line longer than the
// stream's window (9 MiB, what an agent's unbounded hand-off reason once
// made) and one longer than a streamed line may be (2 MiB) are announced
// by their size, and the events after them still arrive, up to the end.
func TestLiveStreamSurvivesLongLines(t *testing.T) {
	w := newWorld(t, "")
	dir := filepath.Join(w.runs, "run-long")
	writeFile(t, filepath.Join(dir, "pid"), "1")
	long := func(seq, n int) string {
		return `{"seq":` + strconv.Itoa(seq) + `,"type":"node_finished","node":"implement","attempt":1,"outcome":"handoff","reason":"` + strings.Repeat("x", n) + `"}` + "\n"
	}
	writeFile(t, filepath.Join(dir, "events.jsonl"), crashedJournal+long(3, 9<<20)+long(4, 2<<20)+
		`{"seq":5,"type":"run_finished","status":"handed_off","reason":"after"}`+"\n"+`{"seq":6,"type":"run_closed"}`+"\n")
	// A stream that stopped hangs here until go test's -timeout fails it.
	req, _ := http.NewRequestWithContext(t.Context(), "GET", w.ts.URL+"/run/0/run-long/events?offset=0", nil)
	resp, err := w.ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var got strings.Builder
	b := make([]byte, 64<<10)
	for !strings.Contains(got.String(), "event: closed") {
		n, err := resp.Body.Read(b)
		got.Write(b[:n])
		if err != nil {
			break
		}
	}
	s := got.String()
	for _, want := range []string{`"type":"run_started"`, `{"type":"oversized_line","bytes":` + strconv.Itoa(len(long(3, 9<<20))-1) + `}`,
		`{"type":"oversized_line","bytes":` + strconv.Itoa(len(long(4, 2<<20))-1) + `}`, `"reason":"after"`, `"type":"run_closed"`, "event: closed"} {
		if !strings.Contains(s, want) {
			t.Errorf("the stream lacks %s", want)
		}
	}
	if len(s) > 64<<10 {
		t.Errorf("the stream sent %d bytes: long lines went out whole", len(s))
	}
}

// TestRunningDurationsAgree: while a run is running its header counts
// time up to now, not to its latest event, so it is never shorter than
// the running attempt's time beside it (the issue saw 6.1 s against
// 2 m 7 s).
func TestRunningDurationsAgree(t *testing.T) {
	w := newWorld(t, "")
	dir := filepath.Join(w.runs, "run-slow")
	now := time.Now().UTC()
	journal := fmt.Sprintf(`{"seq":1,"type":"run_started","time":%q,"run_id":"run-slow","blueprint":"loop"}
{"seq":2,"type":"node_started","time":%q,"node":"implement","attempt":1}
`, now.Add(-2*time.Minute-time.Second).Format(time.RFC3339Nano), now.Add(-time.Minute-time.Second).Format(time.RFC3339Nano))
	writeFile(t, filepath.Join(dir, "events.jsonl"), journal)
	writeFile(t, filepath.Join(dir, "pid"), "1") // a live process carries it on
	_, page := get(t, w.ts.Client(), w.ts.URL+"/run/0/run-slow")
	if !strings.Contains(page, `id="run-status">running<`) {
		t.Fatalf("run-slow is not running:\n%s", page)
	}
	if !strings.Contains(page, "node runs · 0 tokens · 2m") {
		t.Errorf("the header does not count the running run's 2 minutes:\n%s", page)
	}
	if !strings.Contains(page, "implement #1 <span class=\"muted\">1m") {
		t.Errorf("the running attempt does not show its minute so far:\n%s", page)
	}
}
