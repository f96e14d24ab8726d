package inbox_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/sandgate/sandgate/internal/browsertest"
	"github.com/sandgate/sandgate/internal/wait"
)

func browser(t *testing.T) (context.Context, *atomic.Int32) {
	b := browsertest.Start(t)
	return b.Ctx, b.Dialogs
}

// screenshot saves under a fixture- name: the docs' pictures come from
// the CLI's end-to-end tests on real runs.
func screenshot(t *testing.T, ctx context.Context, name string) {
	(&browsertest.Browser{Ctx: ctx}).Screenshot(t, "fixture-"+name)
}

func eval[T any](t *testing.T, ctx context.Context, js string) T {
	t.Helper()
	return browsertest.Eval[T](t, &browsertest.Browser{Ctx: ctx}, js)
}

func TestBrowser(t *testing.T) {
	w := newWorld(t, "")
	ctx, dialogs := browser(t)
	nav := func(path string) {
		t.Helper()
		must(t, chromedp.Do(ctx, chromedp.Navigate(w.ts.URL+path), chromedp.WaitReady(chromedp.CSS("main"))))
	}
	t.Run("list", func(t *testing.T) {
		nav("/")
		if n := eval[int](t, ctx, `document.querySelectorAll("#runs tr.run").length`); n != 2 {
			t.Fatalf("list shows %d runs, want 2", n)
		}
		screenshot(t, ctx, "inbox-runs.png")
	})
	t.Run("run page", func(t *testing.T) {
		nav("/run/0/run-ok")
		states := eval[map[string]string](t, ctx, `Object.fromEntries([...document.querySelectorAll("svg.dag g.node")].map(g => [g.dataset.node, g.dataset.state + "/" + g.dataset.attempts]))`)
		want := map[string]string{"implement": "pass/2", "check": "pass/2", "done": "pass/0"}
		for k, v := range want {
			if states[k] != v {
				t.Errorf("node %s drawn %q, want %q (all: %v)", k, states[k], v, states)
			}
		}
		if n := eval[int](t, ctx, `document.querySelectorAll("svg.dag path.edge").length`); n < 3 {
			t.Errorf("%d edges drawn", n)
		}
		if n := eval[int](t, ctx, `document.querySelectorAll("svg.waterfall rect").length`); n != 4 {
			t.Errorf("waterfall has %d bars, want 4 attempts", n)
		}
		screenshot(t, ctx, "inbox-run.png")
	})
	t.Run("hostile text stays text", func(t *testing.T) {
		for _, p := range []string{"/run/0/run-ok", "/run/0/run-handoff", "/handoffs", "/review/0/rev-1"} {
			nav(p)
			must(t, chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`document.querySelectorAll("details").forEach(d => d.open = true)`)))
			injected := eval[int](t, ctx, `document.querySelectorAll("img, script:not([src='/assets/live.js']), [onerror]").length`)
			text := eval[string](t, ctx, `document.body.innerText`)
			if injected != 0 || !strings.Contains(text, `<script>alert("xss")</script>`) {
				t.Errorf("%s: %d injected elements; payload shown as text: %v", p, injected, strings.Contains(text, "<script>alert"))
			}
		}
		nav("/review/0/rev-1")
		if files := eval[string](t, ctx, `document.getElementById("files").innerText`); !strings.Contains(files, xss+".go") {
			t.Errorf("file list: %q", files)
		}
		screenshot(t, ctx, "inbox-review.png")
		if n := dialogs.Load(); n != 0 {
			t.Fatalf("%d alert dialogs fired", n)
		}
	})
	t.Run("live updates", func(t *testing.T) { liveUpdate(t, ctx, w) })
}

// liveUpdate opens a run while a node blocks, releases it, and expects
// the page (not reloaded) to show the node passed.
func liveUpdate(t *testing.T, ctx context.Context, w *world) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		w.seed.run(t, w.runs, "run-live", loopBP("loop", "wait", "[pass]"))
	}()
	wait.Until(t, "the live run started implement", func() bool {
		return strings.Contains(readFile(filepath.Join(w.runs, "run-live", "events.jsonl")), `"node":"implement"`)
	})
	must(t, chromedp.Do(ctx, chromedp.Navigate(w.ts.URL+"/run/0/run-live"),
		chromedp.WaitReady(chromedp.CSS(`g.node[data-node="implement"][data-state="running"]`))))
	must(t, chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`window.notReloaded = true`)))
	close(w.seed.gate)
	<-done
	must(t, chromedp.Do(ctx, chromedp.WaitReady(chromedp.CSS(`g.node[data-node="done"][data-state="pass"]`))))
	if !eval[bool](t, ctx, `window.notReloaded === true && document.getElementById("run-status").textContent === "succeeded"`) {
		t.Fatal("the page reloaded or did not show the run succeeded")
	}
}

func readFile(p string) string {
	b, _ := os.ReadFile(p)
	return string(b)
}
