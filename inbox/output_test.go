package inbox_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/sandgate/sandgate/internal/wait"
)

// TestBrowserRunningOutputStreams: while a node runs, what it writes to
// its transcript shows on the open run page, entry by entry, without a
// reload and without a journal line in between.
func TestBrowserRunningOutputStreams(t *testing.T) {
	w := newWorld(t, "")
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = w.seed.runErr(w.runs, "run-live", loopBP("loop", "wait", "[pass]"), nil)
	}()
	t.Cleanup(func() {
		select {
		case <-w.seed.gate:
		default:
			close(w.seed.gate)
		}
		<-done
	})
	wait.Until(t, "the live run started implement", func() bool {
		return strings.Contains(readFile(filepath.Join(w.runs, "run-live", "events.jsonl")), `"node":"implement"`)
	})
	ctx, _ := browser(t)
	must(t, chromedp.Do(ctx, chromedp.Navigate(w.ts.URL+"/run/0/run-live"),
		chromedp.WaitReady(chromedp.CSS(`#out-implement-1`)),
		chromedp.Evaluate[chromedp.Void](`window.notReloaded = true`)))
	tr := filepath.Join(w.runs, "run-live", "nodes", "implement", "1", "transcript.jsonl")
	must(t, os.MkdirAll(filepath.Dir(tr), 0o755))
	entry := func(text string) string {
		return `{"kind":"completion","data":{"role":"assistant","content":"` + text + `"}}` + "\n"
	}
	writeFile(t, tr, entry("reading calc.go"))
	must(t, chromedp.Do(ctx, chromedp.WaitReady(chromedp.CSS(`#out-implement-1 .turn.k-completion`))))
	appendFile(t, tr, entry("Add subtracts: fixing it"))
	wait.Until(t, "the second entry shows", func() bool {
		return strings.Contains(eval[string](t, ctx, `document.getElementById("out-implement-1").innerText`), "Add subtracts: fixing it")
	})
	if !eval[bool](t, ctx, `window.notReloaded === true`) {
		t.Fatal("the page reloaded")
	}
}
