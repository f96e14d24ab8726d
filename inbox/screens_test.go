package inbox_test

import (
	"fmt"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"github.com/sandgate/sandgate/inbox"
	"github.com/sandgate/sandgate/internal/browsertest"
	"github.com/sandgate/sandgate/internal/wait"
	"github.com/sandgate/sandgate/runtime"
)

// showcase is a runs directory of genuine runs with plain text (no
// hostile payloads), for the layout checks and the docs' pictures.
func showcase(t *testing.T) (*httptest.Server, string) {
	base := t.TempDir()
	runs, reviews := filepath.Join(base, "runs"), filepath.Join(base, "reviews")
	s := newSeed(t)
	// The runs' repositories, named as a team's would be.
	calc, billing := filepath.Join(base, "src", "calc"), filepath.Join(base, "src", "billing")
	_, err := s.runOpts(runs, "20260102-090000-a1b2c3", taskBP("fix-failing-test", "[fail, pass]"), runtime.RunOptions{
		Inputs: map[string]any{"task": "Fix TestAdd in calc.go: Add subtracts"}, Workspace: calc})
	must(t, err)
	_, err = s.runOpts(runs, "20260102-091500-d4e5f6", taskBP("fix-failing-test", "[fail]"), runtime.RunOptions{
		Inputs: map[string]any{"task": "Make the parser accept trailing commas\nSee issue 12."}, Labels: runtime.Labels{"team": "infra", "ticket": "OPS-12"}, Workspace: calc})
	must(t, err)
	writeFile(t, filepath.Join(runs, "20260102-091500-d4e5f6", "change.patch"), "diff --git a/parser.go b/parser.go\n--- a/parser.go\n+++ b/parser.go\n@@ -41,3 +41,5 @@ func (p *parser) list() []Expr {\n \t\tif p.tok == ')' {\n-\t\t\tp.fail(\"trailing comma\")\n+\t\t\t// a trailing comma ends the list\n+\t\t\tbreak\n \t\t}\n")
	_, err = s.runOpts(runs, "20260102-093000-0a1b2c", taskBP("lint-fix", "[pass]"), runtime.RunOptions{
		Inputs: map[string]any{"task": "Fix the staticcheck findings in ./internal/billing"}, Labels: runtime.Labels{"team": "billing"}, Workspace: billing})
	must(t, err)
	running := make(chan struct{})
	go func() {
		defer close(running)
		_, _ = s.runOpts(runs, "20260102-094500-3d4e5f", strings.Replace(taskBP("dependency-bump", "[pass]"), "type: step, next: check", "type: wait, next: check", 1),
			runtime.RunOptions{Inputs: map[string]any{"task": "Bump golang.org/x/net to v0.30.0"}, Workspace: billing})
	}()
	// Let the run end before its directory is removed.
	t.Cleanup(func() { close(s.gate); <-running })
	writeFile(t, filepath.Join(reviews, "rev-1", "entry.json"), `{"id":"rev-1","title":"Fix TestAdd in calc.go","branch":"sandgate/fix-add","commit":"4f2a9c1","base":"9b8e7d6","run_dir":"`+filepath.Join(runs, "20260102-090000-a1b2c3")+`","status":"pending","created":"`+minutesAgo(9)+`"}`)
	writeFile(t, filepath.Join(reviews, "rev-2", "entry.json"), `{"id":"rev-2","title":"Fix the staticcheck findings in ./internal/billing","branch":"sandgate/billing-lint","commit":"7c3d2e1","base":"9b8e7d6","run_dir":"`+filepath.Join(runs, "20260102-093000-0a1b2c")+`","status":"approved","decided_by":"ana","created":"`+minutesAgo(4)+`"}`)
	writeFile(t, filepath.Join(reviews, "rev-1", "diff.patch"), "diff --git a/calc.go b/calc.go\n--- a/calc.go\n+++ b/calc.go\n@@ -3 +3 @@\n-\treturn a - b\n+\treturn a + b\n")
	srv, err := inbox.New(inbox.Options{RunsDirs: []string{runs}, ReviewDirs: []string{reviews}, Actions: launcher{&actions{}}, Types: s.reg, By: "ana", Poll: 50e6})
	must(t, err)
	srv.Index().MinRefresh = -1
	t.Cleanup(srv.Index().Close)
	ts := httptest.NewServer(srv)
	t.Cleanup(func() { browsertest.CloseServer(ts) })
	wait.Until(t, "the running run started", func() bool {
		return strings.Contains(readFile(filepath.Join(runs, "20260102-094500-3d4e5f", "events.jsonl")), `"node_started"`)
	})
	return ts, "/run/0/20260102-091500-d4e5f6"
}

// minutesAgo is a review's creation time n minutes before now, so the
// pictures read "9m ago" beside runs that ran seconds ago.
func minutesAgo(n int) string {
	return time.Now().UTC().Add(-time.Duration(n) * time.Minute).Format(time.RFC3339)
}

// TestLayoutNarrowAndDark loads every page at 1400 and 400 px, light and
// dark: nothing scrolls sideways, every control has a label, the skip
// link leads to the content, and dark mode really changes the colours.
// With SANDGATE_SCREENSHOTS set it saves the docs' pictures.
func TestLayoutNarrowAndDark(t *testing.T) {
	ts, handoff := showcase(t)
	b := browsertest.Start(t)
	pages := map[string]string{"runs": "/", "run": handoff, "handoffs": "/handoffs", "reviews": "/reviews", "review": "/review/0/rev-1"}
	for _, mode := range []string{"light", "dark"} {
		_, err := chromedp.Call(b.Ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
			Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: mode}}})
		must(t, err)
		for _, width := range []int64{1400, 400} {
			b.Do(t, chromedp.EmulateViewport(width, 900))
			for name, p := range pages {
				b.Do(t, chromedp.Navigate(ts.URL+p), chromedp.WaitReady(chromedp.CSS("main")))
				where := fmt.Sprintf("%s at %d px %s", name, width, mode)
				if sw := browsertest.Eval[int](t, b, `document.documentElement.scrollWidth`); sw > int(width) {
					t.Errorf("%s: the page is %d px wide", where, sw)
				}
				if n := browsertest.Eval[string](t, b, `[...document.querySelectorAll("input:not([type=hidden]), select, textarea")].filter(e => e.labels.length === 0 && !e.getAttribute("aria-label")).map(e => e.name).join(",")`); n != "" {
					t.Errorf("%s: controls without a label: %s", where, n)
				}
				bg := browsertest.Eval[string](t, b, `getComputedStyle(document.body).backgroundColor`)
				if dark := bg == "rgb(21, 25, 28)"; dark != (mode == "dark") {
					t.Errorf("%s: background %s", where, bg)
				}
				if name != "review" { // the docs show the list, a hand-off's page, hand-offs and reviews
					b.Screenshot(t, fmt.Sprintf("inbox-%s-%d-%s.png", name, width, mode))
				}
			}
		}
	}
	b.Do(t, chromedp.Navigate(ts.URL+"/"), chromedp.WaitReady(chromedp.CSS("main")), chromedp.KeyEvent("\t"))
	if got := browsertest.Eval[string](t, b, `document.activeElement.getAttribute("href")`); got != "#main" {
		t.Errorf("the first tab stop is %q, not the skip link", got)
	}
}
