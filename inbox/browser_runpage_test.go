package inbox_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/sandgate/sandgate/internal/browsertest"
)

// TestBrowserCandidatesByAttempt: the run page's change section shows the
// candidate.diff files gates judged, by attempt: the current one open,
// each earlier one folded until clicked, the same diff judged twice shown
// once, and a diff's markup inert.
func TestBrowserCandidatesByAttempt(t *testing.T) {
	w := newWorld(t, "")
	writeCandidates(t, filepath.Join(w.runs, "run-ok"))
	b := browsertest.Start(t)
	b.Do(t, chromedp.Navigate(w.ts.URL+"/run/0/run-ok"), chromedp.WaitReady(chromedp.CSS("#change-by-attempt")))
	b.Click(t, `nav.onpage a[href="#change"]`)
	if !browsertest.Eval[bool](t, b, `location.hash === "#change"`) {
		t.Error("the on-page link does not lead to the change")
	}
	current := browsertest.Eval[string](t, b, `document.querySelector("#change > details[open]").innerText`)
	if !strings.Contains(current, "+return a + b") || strings.Contains(current, "a * b") {
		t.Errorf("the current candidate (the last judged) reads %q", current)
	}
	got := browsertest.Eval[[]string](t, b, `[...document.querySelectorAll("details.candidate > summary")].map(s => s.innerText)`)
	want := []string{"check #1, implement #2 · 1 files: calc.go", "check #2 · 1 files: calc.go"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("candidates by attempt %q, want %q", got, want)
	}
	shown := `document.getElementById("candidate-0").open && document.querySelector("#candidate-0 pre").checkVisibility()`
	if browsertest.Eval[bool](t, b, shown) {
		t.Error("an earlier candidate is open before it is clicked")
	}
	b.Click(t, "#candidate-0 > summary")
	if !browsertest.Eval[bool](t, b, shown) {
		t.Error("clicking an earlier candidate does not show its diff")
	}
	if text := browsertest.Eval[string](t, b, `document.getElementById("candidate-0").innerText`); !strings.Contains(text, "+return a * b // <img src=x onerror=alert(1)>") {
		t.Errorf("the first candidate reads %q", text)
	}
	if n := browsertest.Eval[int](t, b, `document.querySelectorAll("#change img, #change [onerror]").length`); n != 0 || b.Dialogs.Load() != 0 {
		t.Errorf("a candidate's markup ran: %d elements, %d dialogs", n, b.Dialogs.Load())
	}
}

// durationOf parses the last Go duration in s ("… · 2m1s", "1m0.5s").
func durationOf(t *testing.T, what, s string) time.Duration {
	t.Helper()
	f := strings.FieldsFunc(s, func(r rune) bool { return r == ' ' || r == ',' || r == '·' || r == ':' })
	for i := len(f) - 1; i >= 0; i-- {
		if d, err := time.ParseDuration(f[i]); err == nil {
			return d
		}
	}
	t.Fatalf("%s: no duration in %q", what, s)
	return 0
}

// runDurations reads the header's, the attempt's and the timeline's
// duration of implement #1 off the open run page.
func runDurations(t *testing.T, b *browsertest.Browser) (header, attempt, timeline time.Duration) {
	t.Helper()
	header = durationOf(t, "header", browsertest.Eval[string](t, b, `document.querySelector("p.status .muted").innerText`))
	attempt = durationOf(t, "attempt", browsertest.Eval[string](t, b, `document.querySelector("#a-implement-1 > summary .muted").textContent`))
	title := browsertest.Eval[string](t, b, `[...document.querySelectorAll("svg.waterfall g.wf title")].map(e => e.textContent).find(s => s.startsWith("implement #1")) || ""`)
	at, _, _ := strings.Cut(title, " at +")
	timeline = durationOf(t, "timeline", at)
	return header, attempt, timeline
}

// TestBrowserDurationsWhileRunningAndAfterCancel: a running run's header
// counts to now (at least its two minutes, and longer than its running
// attempt's minute, which the timeline agrees with); a canceled node
// keeps its nine minutes of work, not 0 ms.
func TestBrowserDurationsWhileRunningAndAfterCancel(t *testing.T) {
	w := newWorld(t, "")
	now := time.Now().UTC()
	stamp := func(ago time.Duration) string { return now.Add(-ago).Format(time.RFC3339Nano) }
	writeFile(t, filepath.Join(w.runs, "run-slow", "events.jsonl"), fmt.Sprintf(`{"seq":1,"type":"run_started","time":%q,"run_id":"run-slow","blueprint":"loop"}
{"seq":2,"type":"node_started","time":%q,"node":"implement","attempt":1}
`, stamp(2*time.Minute+time.Second), stamp(time.Minute+time.Second)))
	writeFile(t, filepath.Join(w.runs, "run-slow", "pid"), "1") // a live process carries it on
	writeFile(t, filepath.Join(w.runs, "run-stopped", "events.jsonl"), fmt.Sprintf(`{"seq":1,"type":"run_started","time":%q,"run_id":"run-stopped","blueprint":"loop"}
{"seq":2,"type":"node_started","time":%q,"node":"implement","attempt":1}
{"seq":3,"type":"node_canceled","time":%q,"node":"implement","attempt":1}
{"seq":4,"type":"run_finished","time":%q,"status":"canceled","reason":"canceled by ana"}
`, stamp(10*time.Minute), stamp(9*time.Minute), stamp(0), stamp(0)))
	b := browsertest.Start(t)

	b.Do(t, chromedp.Navigate(w.ts.URL+"/run/0/run-slow"), chromedp.WaitReady(chromedp.CSS(`#run-status.s-running`)))
	header, attempt, timeline := runDurations(t, b)
	if header < 2*time.Minute || attempt < time.Minute || header < attempt+time.Minute {
		t.Errorf("running: header %v, implement #1 %v: the header does not count to now", header, attempt)
	}
	if d := timeline - attempt; d < -5*time.Second || d > 5*time.Second {
		t.Errorf("running: the timeline says %v, the attempt %v", timeline, attempt)
	}

	b.Do(t, chromedp.Navigate(w.ts.URL+"/run/0/run-stopped"), chromedp.WaitReady(chromedp.CSS(`#run-status.s-canceled`)))
	header, attempt, timeline = runDurations(t, b)
	if header != 10*time.Minute || attempt != 9*time.Minute || timeline != 9*time.Minute {
		t.Errorf("canceled: header %v, implement #1 %v, timeline %v; want 10m, 9m, 9m", header, attempt, timeline)
	}
}
