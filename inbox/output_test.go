package inbox_test

import (
	"bufio"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/sandgate/sandgate/internal/wait"
)

// startLive starts run-live, whose implement node waits for the test,
// and returns once implement has started.
func startLive(t *testing.T, w *world) {
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
}

// TestBrowserRunningCommandOutput: a running node's command output
// (output.log, written as the box sends it) streams onto the open run
// page as text: markup and terminal escapes in it are shown, never acted
// on. The log follows its end; unticked it stays where the person is;
// "jump to end" goes back to following.
func TestBrowserRunningCommandOutput(t *testing.T) {
	w := newWorld(t, "")
	startLive(t, w)
	log := filepath.Join(w.runs, "run-live", "nodes", "implement", "1", "output.log")
	writeFile(t, log, "go test ./...\n")
	ctx, _ := browser(t)
	must(t, chromedp.Do(ctx, chromedp.Navigate(w.ts.URL+"/run/0/run-live"),
		chromedp.WaitReady(chromedp.CSS(`#log-implement-1`)),
		chromedp.Evaluate[chromedp.Void](`window.notReloaded = true`)))
	text := func() string { return eval[string](t, ctx, `document.getElementById("log-implement-1").textContent`) }
	hostile := "</pre><img src=x onerror=\"window.pwned=1\"><script>window.pwned=2</script>\x1b[2J\x1b]0;title\x07\u202eevil\n"
	var many strings.Builder
	for i := range 300 {
		fmt.Fprintf(&many, "ok  \tcalc/pkg%03d\t0.01s\n", i)
	}
	appendFile(t, log, hostile+many.String())
	wait.Until(t, "the new output shows", func() bool { return strings.Contains(text(), "calc/pkg299") })
	got := text()
	if !strings.Contains(got, `<img src=x onerror="window.pwned=1"><script>`) || !strings.Contains(got, `\x1b[2J\x1b]0;title\a\u202eevil`) {
		t.Errorf("hostile output not shown as text:\n%q", got[:min(len(got), 300)])
	}
	if n := eval[int](t, ctx, `document.querySelectorAll("#live img, #live script").length`); n != 0 || eval[bool](t, ctx, `!!window.pwned`) {
		t.Fatalf("the output became markup: %d elements, pwned %v", n, eval[bool](t, ctx, `!!window.pwned`))
	}
	atEnd := `(function(p){return p.scrollHeight - p.scrollTop - p.clientHeight < 4})(document.getElementById("log-implement-1"))`
	if !eval[bool](t, ctx, atEnd) {
		t.Error("a followed log is not at its end")
	}
	// Unfollow: more output does not move the log.
	must(t, chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`document.querySelector("input.follow").click()`)))
	must(t, chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`document.getElementById("log-implement-1").scrollTop = 0`)))
	appendFile(t, log, "PASS unfollowed\n")
	wait.Until(t, "the unfollowed output shows", func() bool { return strings.Contains(text(), "PASS unfollowed") })
	if eval[bool](t, ctx, atEnd) || eval[bool](t, ctx, `document.querySelector("input.follow").checked`) {
		t.Error("an unfollowed log moved to its end or follows again")
	}
	must(t, chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`document.querySelector("button.jump").click()`)))
	if !eval[bool](t, ctx, atEnd) || !eval[bool](t, ctx, `document.querySelector("input.follow").checked`) {
		t.Error("jump to end did not go to the end and follow")
	}
	if !eval[bool](t, ctx, `window.notReloaded === true`) {
		t.Fatal("the page reloaded")
	}
}

// TestBrowserRunningOutputStreams: while a node runs, what it writes to
// its transcript shows on the open run page, entry by entry, without a
// reload and without a journal line in between.
func TestBrowserRunningOutputStreams(t *testing.T) {
	w := newWorld(t, "")
	startLive(t, w)
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

// TestLiveStreamAnnouncesOutputWrittenBeforeItOpened: a node's output
// written after its page was drawn but before the page's stream opened
// (a command that prints once, then sleeps) is announced by the stream
// first, before any journal line: the page fetches it instead of
// showing no output until the node ends. It once was taken as already
// shown, and a loaded machine's page stayed blank for the whole sleep.
func TestLiveStreamAnnouncesOutputWrittenBeforeItOpened(t *testing.T) {
	w := newWorld(t, "")
	startLive(t, w)
	_, page := get(t, w.ts.Client(), w.ts.URL+"/run/0/run-live")
	m := regexp.MustCompile(`data-events="([^"]+)"`).FindStringSubmatch(page)
	if m == nil || strings.Contains(page, `id="log-implement-1"`) {
		t.Fatalf("the page before any output: events %v, output shown %v", m, strings.Contains(page, `id="log-implement-1"`))
	}
	writeFile(t, filepath.Join(w.runs, "run-live", "nodes", "implement", "1", "output.log"), "go test ./...\n")
	req, _ := http.NewRequestWithContext(t.Context(), "GET", w.ts.URL+m[1], nil)
	resp, err := w.ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	// The node goes on: its journal lines follow, so a stream that does
	// not announce the output sends them first instead of hanging.
	close(w.seed.gate)
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if ev, ok := strings.CutPrefix(sc.Text(), "event: "); ok {
			if ev != "output" {
				t.Fatalf("the stream's first event is %q, not the output written before it opened", ev)
			}
			return
		}
	}
	t.Fatalf("the stream ended without an event: %v", sc.Err())
}
