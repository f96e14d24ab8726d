package inbox_test

import (
	"fmt"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/sandgate/sandgate/internal/browsertest"
	"github.com/sandgate/sandgate/internal/wait"
)

// prepBP hands off with check's bound exhausted: the runtime recommends
// answering implement, while the blueprint's first node is prep.
const prepBP = `version: 1
name: prep
start: prep
nodes:
  prep: {type: step, next: implement}
  implement: {type: step, next: check}
  check:
    type: step
    outcomes: [fail]
    on_pass: done
    on_fail: {to: implement, max: 2}
  done: {type: succeed}
`

// TestHandoffFormPreselectsRecommendedNode answers in a browser without
// touching the node list: the answer must go to the node handoff.json
// recommends, the form says how many answers are left, and an empty note
// is not sent.
func TestHandoffFormPreselectsRecommendedNode(t *testing.T) {
	w := newWorld(t, "")
	w.seed.run(t, w.runs, "run-prep", prepBP)
	b := browsertest.Start(t)
	ctx := b.Ctx
	for _, page := range []string{"/run/0/run-prep", "/handoffs"} {
		must(t, chromedp.Do(ctx, chromedp.Navigate(w.ts.URL+page), chromedp.WaitReady(chromedp.CSS(`form.answer`))))
		form := `document.querySelector('form.answer[action="/run/0/run-prep/answer"]')`
		if got := eval[string](t, ctx, form+`.querySelector("select").value`); got != "implement" {
			t.Errorf("%s: preselected %q, want implement (handoff.json's answer_to)", page, got)
		}
		if got := eval[string](t, ctx, form+`.querySelector(".left").textContent`); got != "3 answers left" {
			t.Errorf("%s: answers left shown as %q", page, got)
		}
		if got := eval[string](t, ctx, `[...document.querySelectorAll("pre.answer-cli")].map(e => e.textContent).join("|")`); !strings.Contains(got, "--to implement") {
			t.Errorf("%s: CLI line %q does not name implement", page, got)
		}
	}
	// An empty note: the browser refuses to submit (required).
	must(t, chromedp.Do(ctx, chromedp.Navigate(w.ts.URL+"/run/0/run-prep"), chromedp.WaitReady(chromedp.CSS(`form.answer`)),
		chromedp.Click(chromedp.CSS(`form.answer button`))))
	if !eval[bool](t, ctx, `document.querySelector("form.answer textarea").matches(":invalid")`) || len(w.acts.list()) != 0 {
		t.Fatalf("an empty note was sent: %v", w.acts.list())
	}
	b.Type(t, `form.answer textarea`, "call the v2 API")
	b.Click(t, `form.answer button`)
	want := `answer run-prep implement "call the v2 API" tester`
	wait.Until(t, "the answer reached the actions", func() bool { return len(w.acts.list()) > 0 })
	if got := w.acts.list(); len(got) != 1 || got[0] != want {
		t.Fatalf("actions %v, want [%s]", got, want)
	}
}

// TestHandoffNoteRequiredServerSide: the form's required attribute is a
// convenience; the server refuses an empty note itself.
func TestHandoffNoteRequiredServerSide(t *testing.T) {
	w := newWorld(t, "")
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	tok := csrfOf(t, c, w.ts.URL+"/run/0/run-handoff")
	resp, err := c.PostForm(w.ts.URL+"/run/0/run-handoff/answer", url.Values{"node": {"implement"}, "note": {"  "}, "csrf": {tok}})
	must(t, err)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest || len(w.acts.list()) != 0 {
		t.Fatalf("blank note: %d, actions %v", resp.StatusCode, w.acts.list())
	}
}

// TestHandoffsPagedAndFiltered: many hand-offs are pages of a few forms,
// and the page finds one by a word of its task.
func TestHandoffsPagedAndFiltered(t *testing.T) {
	w := newWorld(t, "")
	for i := range 11 {
		w.seed.runWith(t, w.runs, fmt.Sprintf("run-h%02d", i), taskBP("calc", "[fail]"), map[string]any{"task": fmt.Sprintf("task number%02d", i)})
	}
	c := w.ts.Client()
	_, p1 := get(t, c, w.ts.URL+"/handoffs")
	_, p2 := get(t, c, w.ts.URL+"/handoffs?page=2")
	if n1, n2 := strings.Count(p1, `<form class="answer"`), strings.Count(p2, `<form class="answer"`); n1 != 10 || n2 != 2 || !strings.Contains(p1, `href="/handoffs?page=2"`) {
		t.Errorf("pages hold %d and %d forms, want 10 and 2", n1, n2)
	}
	_, one := get(t, c, w.ts.URL+"/handoffs?q=number07")
	if strings.Count(one, `<form class="answer"`) != 1 || !strings.Contains(one, "task number07") {
		t.Errorf("?q=number07 did not find the one hand-off")
	}
}
