package inbox_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

const chromium = "/usr/bin/chromium"

// browser starts headless Chromium. Without it the test skips, unless
// SANDGATE_BROWSER_TESTS=required (CI), where a missing browser fails.
func browser(t *testing.T) (context.Context, *atomic.Int32) {
	t.Helper()
	if _, err := os.Stat(chromium); err != nil {
		if os.Getenv("SANDGATE_BROWSER_TESTS") == "required" {
			t.Fatalf("SANDGATE_BROWSER_TESTS=required but %s is missing: %v (install Debian's chromium)", chromium, err)
		}
		t.Skipf("browser tests skipped: %s missing (install Debian's chromium; CI sets SANDGATE_BROWSER_TESTS=required)", chromium)
	}
	opts := []chromedp.ExecAllocatorOption{chromedp.ExecPath(chromium), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.NoFirstRun, chromedp.UserDataDir(t.TempDir()), chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true)}
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	ctx, cancelT := context.WithTimeout(ctx, 90*time.Second)
	t.Cleanup(func() { cancelT(); cancel(); cancelA() })
	dialogs := &atomic.Int32{}
	err := chromedp.Listen(ctx, func(ev any) {
		if _, ok := ev.(*page.EventJavascriptDialogOpening); ok {
			dialogs.Add(1)
			go func() {
				_, _ = chromedp.Call(ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: true})
			}()
		}
	})
	if err != nil {
		t.Fatalf("start %s: %v", chromium, err)
	}
	must(t, chromedp.Do(ctx, chromedp.EmulateViewport(1280, 900)))
	return ctx, dialogs
}

func screenshot(t *testing.T, ctx context.Context, name string) {
	dir := os.Getenv("SANDGATE_SCREENSHOTS")
	if dir == "" {
		return
	}
	b, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	must(t, os.MkdirAll(dir, 0o755))
	must(t, os.WriteFile(filepath.Join(dir, name), b, 0o644))
}

func eval[T any](t *testing.T, ctx context.Context, js string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js))
	if err != nil {
		t.Fatalf("%s: %v", js, err)
	}
	return v
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
		if files := eval[string](t, ctx, `document.getElementById("files").innerText`); !strings.Contains(files, "<img src=x onerror=alert(1)>.go") {
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
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(readFile(filepath.Join(w.runs, "run-live", "events.jsonl")), `"node":"implement"`) {
		if time.Now().After(deadline) {
			t.Fatal("the live run never started implement")
		}
		time.Sleep(20 * time.Millisecond)
	}
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
