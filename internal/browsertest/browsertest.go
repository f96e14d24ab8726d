// Package browsertest starts headless Chromium for the inbox's browser
// tests, so the inbox package and the CLI's end-to-end tests share one
// rule: without the browser a test skips, unless
// SANDGATE_BROWSER_TESTS=required (CI), where a missing browser fails.
package browsertest

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// Chromium is the browser the tests drive (Debian's chromium package).
const Chromium = "/usr/bin/chromium"

// Browser is one headless Chromium tab; start one per test function and
// reuse it across subtests, a start costs about a second.
type Browser struct {
	Ctx context.Context
	// Dialogs counts JavaScript dialogs (alert, confirm) the pages opened;
	// each is accepted so a page never hangs.
	Dialogs *atomic.Int32
}

// Start starts Chromium with a 1280×900 viewport; it stops when the test
// ends. It has no deadline of its own (a loaded machine is slow, not
// wrong): go test's -timeout bounds a hung page.
func Start(t testing.TB) *Browser {
	t.Helper()
	if _, err := os.Stat(Chromium); err != nil {
		if os.Getenv("SANDGATE_BROWSER_TESTS") == "required" {
			t.Fatalf("SANDGATE_BROWSER_TESTS=required but %s is missing: %v (install Debian's chromium)", Chromium, err)
		}
		t.Skipf("browser tests skipped: %s missing (install Debian's chromium; CI sets SANDGATE_BROWSER_TESTS=required)", Chromium)
	}
	opts := []chromedp.ExecAllocatorOption{chromedp.ExecPath(Chromium), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.NoFirstRun, chromedp.UserDataDir(t.TempDir()), chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true)}
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() { cancel(); cancelA() })
	b := &Browser{Ctx: ctx, Dialogs: &atomic.Int32{}}
	err := chromedp.Listen(ctx, func(ev any) {
		if _, ok := ev.(*page.EventJavascriptDialogOpening); ok {
			b.Dialogs.Add(1)
			go func() {
				_, _ = chromedp.Call(ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: true})
			}()
		}
	})
	if err != nil {
		t.Fatalf("start %s: %v", Chromium, err)
	}
	b.Do(t, chromedp.EmulateViewport(1280, 900))
	return b
}

// Do runs actions in the tab and fails the test on an error.
func (b *Browser) Do(t testing.TB, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(b.Ctx, actions...); err != nil {
		t.Fatalf("browser: %v", err)
	}
}

// Click clicks the first element css selects, once the page has it. One
// evaluation of the page's own script finds the element and clicks it:
// chromedp.Click finds a node and then clicks it in a second step, and a
// page that redraws a part of itself in between (the run page's live
// fragments) leaves it holding a node that is gone ("Could not find node
// with given id"), which a loaded machine makes likely. go test's
// -timeout bounds a page that never shows the element.
func (b *Browser) Click(t testing.TB, css string) {
	t.Helper()
	for !Eval[bool](t, b, clickJS(css, "")) {
		time.Sleep(50 * time.Millisecond)
	}
}

// leaving marks the document a ClickThrough clicked in; the page it leads
// to is a new document, without the mark.
const leaving = "__sandgateLeaving"

// ClickThrough clicks css as Click does, on a link or a form's button,
// and returns once the page it leads to has loaded and shows next. The
// next action must wait for that: a chromedp.Navigate while the click's
// navigation (a form's POST and its redirect) is still under way cuts one
// of them short ("page load error net::ERR_ABORTED"), and a check made
// before it lands reads the old page.
func (b *Browser) ClickThrough(t testing.TB, css, next string) {
	t.Helper()
	for !Eval[bool](t, b, clickJS(css, "window."+leaving+" = true;")) {
		time.Sleep(50 * time.Millisecond)
	}
	b.waitLoaded(t, css, next)
}

// SubmitThrough puts value in the form field css selects and submits its
// form, in one evaluation of the page's own script, and returns once the
// page it leads to has loaded and shows next. chromedp.SendKeys finds the
// field and then types into it in further steps, and a page that redraws
// a live part of itself in between, or the navigation its "\n" starts,
// leaves it holding a node that is gone ("Could not find node with given
// id"; seen in CI on the hand-offs page's search).
func (b *Browser) SubmitThrough(t testing.TB, css, value, next string) {
	t.Helper()
	js := fmt.Sprintf(`(() => { const e = document.querySelector(%s); if (!e || !e.form) return false; window.%s = true; e.value = %s; e.form.requestSubmit(); return true })()`,
		strconv.Quote(css), leaving, strconv.Quote(value))
	for !Eval[bool](t, b, js) {
		time.Sleep(50 * time.Millisecond)
	}
	b.waitLoaded(t, css, next)
}

// Type types text into the form field css selects, as a person does:
// one evaluation of the page's own script puts the focus at the end of
// the field, then each key goes to whatever has the focus. No step holds
// a DOM node, which a live part of the page redrawn between steps would
// leave gone (chromedp.SendKeys finds the field, then focuses it by its
// node id: "Could not find node with given id"). Type then checks that
// the field the focus is in still matches css and ends with text: a page
// that replaced the field under the typing, or moved the focus away,
// fails the test, as it would lose a person's text.
func (b *Browser) Type(t testing.TB, css, text string) {
	t.Helper()
	q := strconv.Quote(css)
	focus := fmt.Sprintf(`(() => { const e = document.querySelector(%s); if (!e) return false; e.focus();
		try { e.setSelectionRange(e.value.length, e.value.length) } catch (_) {} return document.activeElement === e })()`, q)
	for !Eval[bool](t, b, focus) {
		time.Sleep(50 * time.Millisecond)
	}
	b.Do(t, chromedp.KeyEvent(text))
	held := fmt.Sprintf(`(() => { const e = document.activeElement; return e && e.matches(%s) ? e.value : null })()`, q)
	if got := Eval[*string](t, b, held); got == nil || !strings.HasSuffix(*got, text) {
		t.Fatalf("typed %q into %s: the focused field is no longer it or holds %s", text, css, quoteOrNil(got))
	}
}

// TypeThrough types text into the field css selects as Type does, then
// presses Enter, and returns once the page that leads to has loaded and
// shows next.
func (b *Browser) TypeThrough(t testing.TB, css, text, next string) {
	t.Helper()
	b.Type(t, css, text)
	b.Do(t, chromedp.Evaluate[chromedp.Void]("window."+leaving+" = true"), chromedp.KeyEvent(kb.Enter))
	b.waitLoaded(t, css, next)
}

func quoteOrNil(s *string) string {
	if s == nil {
		return "nothing"
	}
	return strconv.Quote(*s)
}

// waitLoaded returns once the page an action on css left for has loaded
// and shows next.
func (b *Browser) waitLoaded(t testing.TB, css, next string) {
	t.Helper()
	loaded := fmt.Sprintf(`!window.%s && document.readyState === "complete" && document.querySelector(%s) !== null`, leaving, strconv.Quote(next))
	for {
		// An evaluation that meets the old document going away fails:
		// look again, until the browser itself is gone.
		ok, err := chromedp.Run(b.Ctx, chromedp.Evaluate[bool](loaded))
		if err == nil && ok {
			return
		}
		if b.Ctx.Err() != nil {
			t.Fatalf("after clicking %s, waiting for %s: %v (%v)", css, next, err, b.Ctx.Err())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// clickJS is the page script that clicks the first element css selects,
// running before first; it reports whether there was one.
func clickJS(css, before string) string {
	return fmt.Sprintf(`(() => { const e = document.querySelector(%s); if (!e) return false; %s e.click(); return true })()`, strconv.Quote(css), before)
}

// Eval evaluates js in the tab's page.
func Eval[T any](t testing.TB, b *Browser, js string) T {
	t.Helper()
	v, err := chromedp.Run(b.Ctx, chromedp.Evaluate[T](js))
	if err != nil {
		t.Fatalf("%s: %v", js, err)
	}
	return v
}

// Screenshot saves the whole page as $SANDGATE_SCREENSHOTS/name, when
// that variable is set.
func (b *Browser) Screenshot(t testing.TB, name string) {
	t.Helper()
	dir := os.Getenv("SANDGATE_SCREENSHOTS")
	if dir == "" {
		return
	}
	png, err := chromedp.Run(b.Ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// CloseServer closes ts without waiting on its clients: a browser still
// on one of its pages holds /events open (every inbox page listens for
// changes), and ts.Close alone waits for that stream to end, which it
// does only when the browser goes. New connections are refused first, so
// none opens after the others are cut (Close closes the listener again,
// harmlessly).
func CloseServer(ts *httptest.Server) {
	_ = ts.Listener.Close()
	ts.CloseClientConnections()
	ts.Close()
}
