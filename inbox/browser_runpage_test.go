package inbox_test

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/sandgate/sandgate/internal/browsertest"
	"github.com/sandgate/sandgate/internal/wait"
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

// TestBrowserRunPageKeepsTheNoteBeingTyped: a live run page redraws its
// live part at every journal line. A hand-off form nobody touched is
// redrawn with the rest; one a person is typing a note in stays, with its
// text, the focus and the caret, so the typing goes on where it was.
func TestBrowserRunPageKeepsTheNoteBeingTyped(t *testing.T) {
	w := newWorld(t, "")
	journal := filepath.Join(w.runs, "run-handoff", "events.jsonl")
	writeFile(t, filepath.Join(w.runs, "run-handoff", "pid"), "1") // a live process carries it on
	appendFile(t, journal, `{"seq":21,"type":"answered","time":"2026-01-02T03:04:05Z","node":"implement","feedback":"try again","by":"ana"}`+"\n")
	b := browsertest.Start(t)
	b.Do(t, chromedp.Navigate(w.ts.URL+"/run/0/run-handoff"), chromedp.WaitReady(chromedp.CSS(`#run-status.s-running`)))
	seq := 21
	handOff := func(reason string) { // the run hands off (again): the page redraws
		t.Helper()
		seq++
		appendFile(t, journal, fmt.Sprintf(`{"seq":%d,"type":"run_finished","time":"2026-01-02T03:05:05Z","status":"handed_off","reason":%q}`+"\n", seq, reason))
		wait.Until(t, "the page shows "+reason, func() bool {
			return browsertest.Eval[string](t, b, `(document.querySelector("#live .reason") || {textContent: ""}).textContent`) == reason
		})
	}
	const note = `#live form.answer textarea[name="note"]`
	handOff("hands off")
	b.Do(t, chromedp.Evaluate[chromedp.Void](`window.untouched = document.querySelector("#live form.answer")`))
	handOff("hands off again")
	if browsertest.Eval[bool](t, b, `document.querySelector("#live form.answer") === window.untouched`) {
		t.Error("a form nobody touched was kept, not redrawn")
	}

	b.Type(t, note, "half a thought")
	b.Do(t, chromedp.Evaluate[chromedp.Void](`window.typedIn = document.querySelector("#live form.answer")`))
	handOff("and once more")
	kept := `(() => { const f = document.querySelectorAll("#live form.answer"), e = document.activeElement;
		return f.length === 1 && f[0] === window.typedIn && e === f[0].querySelector("textarea") && e.selectionStart === e.value.length ? e.value : "" })()`
	if got := browsertest.Eval[string](t, b, kept); got != "half a thought" {
		t.Fatalf("after a redraw the note being typed is %q, want it kept with the focus and caret at its end", got)
	}
	b.Type(t, note, ", and the rest")
	if got := browsertest.Eval[string](t, b, `document.querySelector(`+strconv.Quote(note)+`).value`); got != "half a thought, and the rest" {
		t.Errorf("the note reads %q", got)
	}

	// A node chosen, the note cleared and the focus gone: the choice
	// alone keeps the form.
	chosen := browsertest.Eval[string](t, b, `(() => { const f = document.querySelector("#live form.answer"), s = f.querySelector("select");
		f.querySelector("textarea").value = ""; document.activeElement.blur();
		const o = [...s.options].find(o => !o.selected); s.value = o.value; return o.value })()`)
	handOff("and a last time")
	if got := browsertest.Eval[string](t, b, `document.querySelector("#live form.answer select").value`); got != chosen {
		t.Errorf("after a redraw the node chosen is %q, want %q", got, chosen)
	}
}
