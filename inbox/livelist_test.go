package inbox_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/sandgate/sandgate/internal/wait"
)

// TestBrowserListUpdatesLive opens the runs list while a run runs: when
// the run ends its row turns succeeded, a run handed off meanwhile raises
// the nav's hand-off count, and the page is never reloaded.
func TestBrowserListUpdatesLive(t *testing.T) {
	w := newWorld(t, "")
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = w.seed.runErr(w.runs, "run-live", loopBP("loop", "wait", "[pass]"), nil)
	}()
	wait.Until(t, "the live run started implement", func() bool {
		return strings.Contains(readFile(filepath.Join(w.runs, "run-live", "events.jsonl")), `"node":"implement"`)
	})
	ctx, _ := browser(t)
	row := `#runs tr.run[data-href="/run/0/run-live"]`
	must(t, chromedp.Do(ctx, chromedp.Navigate(w.ts.URL+"/"), chromedp.WaitReady(chromedp.CSS(row+` .s-running`))))
	if got := eval[string](t, ctx, `document.getElementById("nav-handoffs").textContent`); got != "1" {
		t.Fatalf("nav shows %s hand-offs, want 1", got)
	}
	must(t, chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`window.notReloaded = true`)))
	close(w.seed.gate)
	<-done
	w.seed.run(t, w.runs, "run-handoff-2", loopBP("loop", "step", "[fail]"))
	must(t, chromedp.Do(ctx, chromedp.WaitReady(chromedp.CSS(row+` .s-succeeded`)),
		chromedp.WaitReady(chromedp.CSS(`#runs tr.run[data-href="/run/0/run-handoff-2"]`))))
	wait.Until(t, "the nav counts two hand-offs", func() bool {
		return eval[string](t, ctx, `document.getElementById("nav-handoffs").textContent`) == "2"
	})
	if !eval[bool](t, ctx, `window.notReloaded === true`) {
		t.Fatal("the list reloaded instead of updating")
	}
}

// TestBrowserKeyboardList: j and k move through the rows, enter opens the
// current one.
func TestBrowserKeyboardList(t *testing.T) {
	w := newWorld(t, "")
	ctx, _ := browser(t)
	must(t, chromedp.Do(ctx, chromedp.Navigate(w.ts.URL+"/"), chromedp.WaitReady(chromedp.CSS(`#runs tr.run`)),
		chromedp.KeyEvent("j"), chromedp.KeyEvent("j"), chromedp.KeyEvent("k")))
	first := eval[string](t, ctx, `document.querySelector("#runs tr.run").dataset.href`)
	if got := eval[string](t, ctx, `document.querySelector("tr.current").dataset.href`); got != first {
		t.Fatalf("after j j k the current row is %s, want %s", got, first)
	}
	must(t, chromedp.Do(ctx, chromedp.KeyEvent("\r"), chromedp.WaitReady(chromedp.CSS(`#live`))))
	if got := eval[string](t, ctx, `location.pathname`); got != first {
		t.Fatalf("enter opened %s, want %s", got, first)
	}
}
