package inbox_test

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/sandgate/sandgate/internal/browsertest"
)

// taskBP is loopBP with a task input.
func taskBP(name, checkOutcomes string) string {
	return strings.Replace(loopBP(name, "step", checkOutcomes), "start: implement", "inputs:\n  task: {required: true}\nstart: implement", 1)
}

// rowsOf lists the run ids of a runs page, in order.
func rowsOf(body string) []string {
	var ids []string
	for _, m := range regexp.MustCompile(`<tr class="run" data-href="/run/0/([^"]+)"`).FindAllStringSubmatch(body, -1) {
		ids = append(ids, m[1])
	}
	return ids
}

func TestSearchFindsTaskInputsAndFailingTests(t *testing.T) {
	w := newWorld(t, "")
	w.seed.runWith(t, w.runs, "run-add", taskBP("calc", "[pass]"), map[string]any{"task": "Fix TestAdd in calc.go\nIt subtracts."})
	w.seed.runWith(t, w.runs, "run-sub", taskBP("calc", "[fail]"), map[string]any{"task": "Speed up the parser"})
	c := w.ts.Client()
	cases := []struct {
		query string
		want  []string
	}{
		{"q=TestAdd", []string{"run-add"}},
		{"q=testadd+calc.go", []string{"run-add"}},
		{"q=testadd+parser", nil},
		{"q=subtracts", []string{"run-add"}},                            // the task's second line is searched, not shown
		{"q=TestFlakyParser/check", []string{"run-sub", "run-handoff"}}, // run-ok fixed it
		{"q=handed_off", []string{"run-sub", "run-handoff"}},
		{"q=calc&status=succeeded", []string{"run-add"}},
		{"blueprint=calc&sort=run&dir=asc", []string{"run-add", "run-sub"}},
		{"blueprint=calc&sort=run", []string{"run-sub", "run-add"}},
		{"from=2000-01-01&to=2000-01-02", nil},
	}
	for _, tc := range cases {
		code, body := get(t, c, w.ts.URL+"/?"+tc.query)
		if got := rowsOf(body); code != 200 || fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("?%s: %d, rows %v, want %v", tc.query, code, got, tc.want)
		}
	}
	_, body := get(t, c, w.ts.URL+"/?q=TestAdd")
	if !strings.Contains(body, `<span class="task">Fix TestAdd in calc.go</span>`) || strings.Contains(body, "It subtracts") {
		t.Errorf("the row does not show the task's first line (only):\n%s", body)
	}
	// Sort and page links keep the query.
	if !strings.Contains(body, `href="/?q=TestAdd&amp;sort=cost"`) {
		t.Errorf("the cost column's link drops the query")
	}
}

func TestPagingNeverPastTheEnd(t *testing.T) {
	w := newWorld(t, "")
	for _, p := range []string{"99", "-1", "x"} {
		_, body := get(t, w.ts.Client(), w.ts.URL+"/?page="+p)
		if !strings.Contains(body, `<span id="page">page 1 of 1</span>`) || len(rowsOf(body)) != 2 {
			t.Errorf("?page=%s: %s", p, regexp.MustCompile(`page \S+ of \S+`).FindString(body))
		}
	}
}

// TestBrowserSearchByTaskWord types a word of a task into the search box:
// the list shows that run, and the URL holds the query so the view can be
// shared.
func TestBrowserSearchByTaskWord(t *testing.T) {
	w := newWorld(t, "")
	w.seed.runWith(t, w.runs, "run-add", taskBP("calc", "[pass]"), map[string]any{"task": "Fix TestAdd in calc.go"})
	b := browsertest.Start(t)
	ctx := b.Ctx
	b.Do(t, chromedp.Navigate(w.ts.URL+"/"), chromedp.WaitReady(chromedp.CSS(`#runs`)))
	// Keys and Enter, as a person searches; the value attribute is the
	// server's: only the result page has it.
	b.TypeThrough(t, `input[name="q"]`, "testadd", `input[name="q"][value="testadd"]`)
	if n := eval[int](t, ctx, `document.querySelectorAll("#runs tr.run").length`); n != 1 {
		t.Errorf("%d rows for testadd", n)
	}
	loc, err := url.Parse(eval[string](t, ctx, `location.href`))
	must(t, err)
	if loc.Query().Get("q") != "testadd" {
		t.Errorf("the URL %s does not hold the query", loc)
	}
}
