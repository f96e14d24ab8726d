package inbox_test

import (
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestGraphInRanksAndClickable: the DAG grows down the page, one rank per
// row, and a node links to its last attempt, which opens when clicked.
func TestGraphInRanksAndClickable(t *testing.T) {
	w := newWorld(t, "")
	_, body := get(t, w.ts.Client(), w.ts.URL+"/run/0/run-ok")
	ys := map[string]int{}
	for _, m := range regexp.MustCompile(`data-node="(\w+)"[^>]*>\s*<title>[^<]*</title>\s*<rect x="\d+" y="(\d+)"`).FindAllStringSubmatch(body, -1) {
		ys[m[1]], _ = strconv.Atoi(m[2])
	}
	if !(ys["implement"] < ys["check"] && ys["check"] < ys["done"]) {
		t.Errorf("ranks not top to bottom: %v", ys)
	}
	if !strings.Contains(body, `<a class="nodelink" href="#a-check-2"`) || !strings.Contains(body, `id="a-check-2"`) {
		t.Fatal("the check node does not link to its last attempt")
	}
	ctx, _ := browser(t)
	must(t, chromedp.Do(ctx, chromedp.Navigate(w.ts.URL+"/run/0/run-ok"), chromedp.WaitReady(chromedp.CSS(`a.nodelink`)),
		chromedp.Click(chromedp.CSS(`a.nodelink[href="#a-check-2"] rect`)),
		chromedp.WaitReady(chromedp.CSS(`details#a-check-2[open]`))))
	if got := eval[float64](t, ctx, `document.querySelector("svg.dag").getBoundingClientRect().width`); got > 1280 {
		t.Errorf("the graph is %v px wide", got)
	}
}

// TestWaterfallColouredByOutcome: a failed gate is red and a pushed
// branch is not amber, whatever their kind.
func TestWaterfallColouredByOutcome(t *testing.T) {
	w := newWorld(t, "")
	span := func(name, start, end, attrs, status string) string {
		return `{"Name":"` + name + `","StartTime":"2026-01-02T03:04:0` + start + `Z","EndTime":"2026-01-02T03:04:0` + end + `Z","Attributes":[` + attrs + `],"Status":{"Code":"` + status + `","Description":""}}` + "\n"
	}
	attr := func(k, v string) string { return `{"Key":"` + k + `","Value":{"Type":"STRING","Value":"` + v + `"}}` }
	writeFile(t, filepath.Join(w.runs, "run-ok", "trace.json"),
		span("lint", "1", "2", attr("sandgate.node.outcome", "fail")+","+attr("sandgate.stage", "verify"), "Unset")+
			span("push", "2", "3", attr("sandgate.stage", "promote"), "Unset")+
			span("agent", "3", "4", attr("sandgate.node.outcome", "pass")+","+attr("sandgate.stage", "propose"), "Unset")+
			span("crash", "4", "5", "", "Error"))
	_, body := get(t, w.ts.Client(), w.ts.URL+"/run/0/run-ok")
	got := map[string]string{}
	for _, m := range regexp.MustCompile(`<g class="wf st-(\w+)"><title>([a-z]+)`).FindAllStringSubmatch(body, -1) {
		got[m[2]] = m[1]
	}
	want := map[string]string{"lint": "fail", "push": "ok", "agent": "pass", "crash": "error"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s coloured %q, want %q (all %v)", k, got[k], v, got)
		}
	}
}
