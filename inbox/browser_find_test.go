package inbox_test

import (
	"fmt"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/sandgate/sandgate/internal/browsertest"
	"github.com/sandgate/sandgate/runtime"
)

// The issue asks every bullet of the inbox in the browser; these are the
// list's finding, sorting and paging, and the hand-off and review pages',
// which other tests check over HTTP.

// rowHrefs is the runs list's rows, in order, as the browser has them.
const rowHrefs = `[...document.querySelectorAll("#runs tr.run")].map(r => r.dataset.href)`

// TestBrowserFindLabelDateSortPage: a label on a row is a link to the
// runs that have it; a date range is typed into the form; a column's
// header sorts by it and again the other way; older → pages; every view's
// query is in the URL.
func TestBrowserFindLabelDateSortPage(t *testing.T) {
	w := newWorld(t, "")
	_, err := w.seed.runOpts(w.runs, "run-infra", taskBP("calc", "[pass]"), runtime.RunOptions{
		Inputs: map[string]any{"task": "Fix TestAdd"}, Labels: runtime.Labels{"team": "infra"}})
	must(t, err)
	b := browsertest.Start(t)
	nav := func(p string) { b.Do(t, chromedp.Navigate(w.ts.URL+p), chromedp.WaitReady(chromedp.CSS("#runs"))) }
	query := func() url.Values {
		loc, err := url.Parse(browsertest.Eval[string](t, b, `location.href`))
		must(t, err)
		return loc.Query()
	}

	nav("/")
	if got := browsertest.Eval[string](t, b, `document.querySelector('#runs tr.run[data-href="/run/0/run-infra"] .task').textContent`); got != "Fix TestAdd" {
		t.Errorf("the row shows the task as %q", got)
	}
	b.Click(t, `#runs tr.run[data-href="/run/0/run-infra"] a.label`)
	b.Do(t, chromedp.WaitReady(chromedp.CSS(`input[name="q"][value="label:team=infra"]`)))
	if got := browsertest.Eval[[]string](t, b, rowHrefs); !slices.Equal(got, []string{"/run/0/run-infra"}) || query().Get("q") != "label:team=infra" {
		t.Errorf("the label's link shows %v at %v", got, query())
	}

	dateRange := func(from, to string) []string {
		nav("/")
		b.Do(t, chromedp.SetValue(`input[name="from"]`, from), chromedp.SetValue(`input[name="to"]`, to),
			chromedp.Submit(`input[name="from"]`), chromedp.WaitReady(chromedp.CSS(`input[name="from"][value="`+from+`"]`)))
		if q := query(); q.Get("from") != from || q.Get("to") != to {
			t.Errorf("the URL does not hold the range: %v", q)
		}
		return browsertest.Eval[[]string](t, b, rowHrefs)
	}
	if got := dateRange("2000-01-01", "2000-01-02"); len(got) != 0 {
		t.Errorf("a range before every run shows %v", got)
	}
	today := time.Now().UTC()
	if got := dateRange(today.AddDate(0, 0, -1).Format(time.DateOnly), today.AddDate(0, 0, 1).Format(time.DateOnly)); len(got) != 3 {
		t.Errorf("a range around today shows %v, want the 3 runs", got)
	}

	nav("/")
	runHeader := `a[href*="sort=run"]`
	b.Click(t, `th `+runHeader)
	b.Do(t, chromedp.WaitReady(chromedp.CSS(`th[aria-sort] `+runHeader)))
	first := browsertest.Eval[[]string](t, b, rowHrefs)
	reversed := slices.Clone(first)
	slices.Reverse(reversed)
	b.Click(t, `th[aria-sort] `+runHeader)
	b.Do(t, chromedp.WaitReady(chromedp.CSS(`th[aria-sort="`+map[bool]string{true: "descending", false: "ascending"}[slices.IsSorted(first)]+`"] `+runHeader)))
	second := browsertest.Eval[[]string](t, b, rowHrefs)
	if !(slices.IsSorted(first) || slices.IsSorted(reversed)) || !slices.Equal(second, reversed) || query().Get("sort") != "run" {
		t.Errorf("sorted by run: %v, then %v (at %v)", first, second, query())
	}

	// 50 a page: 51 more runs make two pages.
	for i := range 51 {
		copyRun(t, filepath.Join(w.runs, "run-ok"), filepath.Join(w.runs, fmt.Sprintf("run-copy-%02d", i)))
	}
	rows := func() int { return len(browsertest.Eval[[]string](t, b, rowHrefs)) }
	if one, two := twoPages(t, b, w.ts.URL+"/?q=run-copy", rows); one != 50 || two != 1 || query().Get("page") != "2" || query().Get("q") != "run-copy" {
		t.Errorf("51 runs: pages of %d and %d at %v", one, two, query())
	}
}

// TestBrowserHandoffsPagedFilteredLive: hand-offs come ten to a page,
// the search finds one by a word of its task, and a run that hands off
// while the page is open appears on it without a reload.
func TestBrowserHandoffsPagedFilteredLive(t *testing.T) {
	w := newWorld(t, "")
	for i := range 10 {
		w.seed.runWith(t, w.runs, fmt.Sprintf("run-h%02d", i), taskBP("calc", "[fail]"), map[string]any{"task": fmt.Sprintf("task number%02d", i)})
	}
	b := browsertest.Start(t)
	forms := func() int { return browsertest.Eval[int](t, b, `document.querySelectorAll("form.answer").length`) }
	if one, two := twoPages(t, b, w.ts.URL+"/handoffs", forms); one != 10 || two != 1 {
		t.Errorf("the pages hold %d and %d forms, want 10 and 1", one, two)
	}
	b.SubmitThrough(t, `input[name="q"]`, "number07", `input[name="q"][value="number07"]`)
	if n, text := forms(), browsertest.Eval[string](t, b, `document.getElementById("handoffs-live").innerText`); n != 1 || !strings.Contains(text, "task number07") {
		t.Errorf("number07 finds %d forms: %q", n, text)
	}

	b.Do(t, chromedp.Navigate(w.ts.URL+"/handoffs?q=latecomer"), chromedp.WaitReady(chromedp.CSS(`#handoffs-live`)),
		chromedp.Evaluate[chromedp.Void](`window.notReloaded = true`))
	w.seed.runWith(t, w.runs, "run-late", taskBP("calc", "[fail]"), map[string]any{"task": "the latecomer"})
	b.Do(t, chromedp.WaitReady(chromedp.CSS(`form.answer[action="/run/0/run-late/answer"]`)))
	if !browsertest.Eval[bool](t, b, `window.notReloaded === true`) || browsertest.Eval[string](t, b, `document.getElementById("nav-handoffs").textContent`) != "12" {
		t.Errorf("the page reloaded, or the nav counts %s hand-offs, want 12", browsertest.Eval[string](t, b, `document.getElementById("nav-handoffs").textContent`))
	}
}

// TestBrowserReviewQueueFilterPageLinkLive: the review queue filters by
// status, pages, links an entry to its run, and shows an entry queued
// while it is open without a reload.
func TestBrowserReviewQueueFilterPageLinkLive(t *testing.T) {
	w := newWorld(t, "")
	entry := func(id, title, status string) {
		writeFile(t, filepath.Join(w.reviews, id, "entry.json"), `{"id":"`+id+`","title":"`+title+`","branch":"sandgate/`+id+`","commit":"c","base":"b","run_dir":"`+filepath.Join(w.runs, "run-handoff")+`","status":"`+status+`","created":"2026-01-03T03:04:05Z"}`)
	}
	for i := range 50 {
		entry(fmt.Sprintf("rev-a%02d", i), fmt.Sprintf("Bump dependency %02d", i), "approved")
	}
	b := browsertest.Start(t)
	rows := func() int {
		return browsertest.Eval[int](t, b, `document.querySelectorAll("#reviews-live tr[data-href]").length`)
	}
	if one, two := twoPages(t, b, w.ts.URL+"/reviews", rows); one != 50 || two != 1 {
		t.Errorf("the pages hold %d and %d entries, want 50 and 1", one, two)
	}
	b.Do(t, chromedp.Navigate(w.ts.URL+"/reviews"), chromedp.WaitReady(chromedp.CSS(`#reviews-live`)),
		chromedp.SetValue(`select[name="status"]`, "pending"), chromedp.Submit(`select[name="status"]`),
		chromedp.WaitReady(chromedp.CSS(`select[name="status"] option[value="pending"][selected]`)))
	if n := rows(); n != 1 || browsertest.Eval[string](t, b, `document.querySelector("#reviews-live tr[data-href]").dataset.href`) != "/review/0/rev-1" {
		t.Errorf("status pending shows %d entries", n)
	}

	b.Do(t, chromedp.Navigate(w.ts.URL+"/reviews?q=latecomer"), chromedp.WaitReady(chromedp.CSS(`#reviews-live`)),
		chromedp.Evaluate[chromedp.Void](`window.notReloaded = true`))
	entry("rev-late", "The latecomer", "pending")
	b.Do(t, chromedp.WaitReady(chromedp.CSS(`#reviews-live tr[data-href="/review/0/rev-late"]`)))
	if !browsertest.Eval[bool](t, b, `window.notReloaded === true`) || browsertest.Eval[string](t, b, `document.getElementById("nav-reviews").textContent`) != "2" {
		t.Errorf("the page reloaded, or the nav counts %s pending reviews, want 2", browsertest.Eval[string](t, b, `document.getElementById("nav-reviews").textContent`))
	}
	b.Click(t, `#reviews-live tr[data-href="/review/0/rev-late"] a[href="/run/0/run-handoff"]`)
	b.Do(t, chromedp.WaitReady(chromedp.CSS(`#run-status`)))
	if got := browsertest.Eval[string](t, b, `location.pathname`); got != "/run/0/run-handoff" {
		t.Errorf("the entry's run link leads to %s", got)
	}
}

// TestBrowserRunPageLeadsWithTheDecision: on a hand-off the answer form
// is in the first screen, above the graph, timeline and attempts; the
// waterfall colours a failed gate unlike a passed one.
func TestBrowserRunPageLeadsWithTheDecision(t *testing.T) {
	w := newWorld(t, "")
	b := browsertest.Start(t)
	b.Do(t, chromedp.EmulateViewport(1400, 900), chromedp.Navigate(w.ts.URL+"/run/0/run-handoff"), chromedp.WaitReady(chromedp.CSS(`form.answer`)))
	top := func(css string) float64 {
		return browsertest.Eval[float64](t, b, `document.querySelector("`+css+`").getBoundingClientRect().top`)
	}
	form := top(`form.answer`)
	if form > 900 {
		t.Errorf("the answer form starts %v px down, below the first screen", form)
	}
	for _, s := range []string{"#graph", "#timeline", "#attempts"} {
		if at := top(s); at < form {
			t.Errorf("%s (%v px) is above the answer form (%v px)", s, at, form)
		}
	}
	fill := func(state string) string {
		return browsertest.Eval[string](t, b, `(el => el ? getComputedStyle(el).fill : "none")(document.querySelector("svg.waterfall g.wf.st-`+state+` rect"))`)
	}
	if f, p := fill("fail"), fill("pass"); f == "none" || p == "none" || f == p {
		t.Errorf("the waterfall fills a failed bar %s and a passed one %s", f, p)
	}
}

// twoPages is what count finds on the list at url and, after its
// "older →" link is clicked, on its second page.
func twoPages(t *testing.T, b *browsertest.Browser, url string, count func() int) (int, int) {
	b.Do(t, chromedp.Navigate(url), chromedp.WaitReady(chromedp.CSS(`#pages`)))
	one := count()
	b.Click(t, `#pages a[rel="next"]`)
	b.Do(t, chromedp.WaitReady(chromedp.CSS(`#pages a[rel="prev"]`)))
	return one, count()
}
