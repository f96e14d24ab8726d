package inbox_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/sandgate/sandgate/inbox"
	"github.com/sandgate/sandgate/internal/wait"
	"github.com/sandgate/sandgate/runtime"
)

// launcher is actions that can also start runs: a re-run copies the run
// under a new id (what the CLI's re-run leaves behind: a run directory).
type launcher struct{ *actions }

func (l launcher) Rerun(_ context.Context, runDir, by string) (string, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.calls = append(l.calls, fmt.Sprintf("rerun %s %s", filepath.Base(runDir), by))
	if l.fail != nil {
		return "", l.fail
	}
	dst := filepath.Join(filepath.Dir(runDir), "run-again")
	b, err := os.ReadFile(filepath.Join(runDir, "events.jsonl"))
	if err == nil {
		err = os.MkdirAll(dst, 0o755)
	}
	if err == nil {
		err = os.WriteFile(filepath.Join(dst, "events.jsonl"), b, 0o644)
	}
	return dst, err
}

func withLauncher(o *inbox.Options) { o.Actions = launcher{o.Actions.(*actions)} }

// post sends a form with the session's CSRF token taken from page.
func postForm(t *testing.T, w *world, c *http.Client, page, path string, form url.Values) (int, string) {
	t.Helper()
	_, body := get(t, c, w.ts.URL+page)
	form.Set("csrf", csrfIn(body))
	resp, err := c.PostForm(w.ts.URL+path, form)
	must(t, err)
	return resp.StatusCode, resp.Header.Get("Location") + readAll(resp)
}

func TestActionsConfirmThenJournalWho(t *testing.T) {
	w := newWorldWith(t, withLauncher)
	c := client(nil)
	// The run page offers re-run on a finished run; its link is a
	// confirmation page, which says what will happen.
	_, page := get(t, c, w.ts.URL+"/run/0/run-ok")
	if !strings.Contains(page, `href="/run/0/run-ok/confirm/rerun"`) || strings.Contains(page, "/confirm/cancel") {
		t.Fatalf("run page actions wrong:\n%s", page)
	}
	code, body := get(t, c, w.ts.URL+"/run/0/run-ok/confirm/rerun")
	if code != 200 || !strings.Contains(body, `action="/run/0/run-ok/act/rerun"`) || !strings.Contains(body, "same inputs") {
		t.Fatalf("confirm page: %d\n%s", code, body)
	}
	if len(w.acts.list()) != 0 {
		t.Fatal("showing the confirmation acted")
	}
	code, loc := postForm(t, w, c, "/run/0/run-ok/confirm/rerun", "/run/0/run-ok/act/rerun", url.Values{})
	if code != http.StatusSeeOther || !strings.HasPrefix(loc, "/run/0/run-again") {
		t.Fatalf("rerun: %d %s", code, loc)
	}
	for _, f := range []string{"run-ok", "run-again"} {
		b, _ := os.ReadFile(filepath.Join(w.runs, f, inbox.ActionsFile))
		if !strings.Contains(string(b), `"by":"tester"`) {
			t.Errorf("%s's %s: %s", f, inbox.ActionsFile, b)
		}
	}
	if _, page := get(t, c, w.ts.URL+"/run/0/run-again"); !strings.Contains(page, "started as a re-run") {
		t.Error("the new run's page does not say whose re-run it is")
	}
	// Cancel is not offered to a finished run, and refused if forced.
	if code, _ := postForm(t, w, c, "/run/0/run-ok/confirm/rerun", "/run/0/run-ok/act/cancel", url.Values{}); code != http.StatusConflict {
		t.Errorf("cancel of a finished run: %d, want 409", code)
	}
	if _, err := os.Stat(filepath.Join(w.runs, "run-ok", runtime.CancelFile)); err == nil {
		t.Error("a refused cancel wrote the cancel file")
	}
}

func TestActionsNeedCSRFAndSameOrigin(t *testing.T) {
	w := newWorldWith(t, withLauncher)
	c := client(nil)
	_, body := get(t, c, w.ts.URL+"/run/0/run-ok/confirm/rerun")
	tok := csrfIn(body)
	for _, a := range []struct {
		name string
		form url.Values
		hdr  map[string]string
	}{
		{"no token", url.Values{}, nil},
		{"wrong token", url.Values{"csrf": {strings.Repeat("0", 64)}}, nil},
		{"cross-site origin", url.Values{"csrf": {tok}}, map[string]string{"Origin": "https://evil.example"}},
	} {
		req, _ := http.NewRequest("POST", w.ts.URL+"/run/0/run-ok/act/rerun", strings.NewReader(a.form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		for k, v := range a.hdr {
			req.Header.Set(k, v)
		}
		resp, err := c.Do(req)
		must(t, err)
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("%s: %d, want 403", a.name, resp.StatusCode)
		}
	}
	if len(w.acts.list()) != 0 {
		t.Fatalf("refused requests acted: %v", w.acts.list())
	}
	for _, p := range []string{"/run/0/..%2frun-ok/confirm/rerun", "/run/0/run-ok/confirm/%2e%2e", "/run/0/run-ok/confirm/rm"} {
		if code, _ := get(t, c, w.ts.URL+p); code == 200 {
			t.Errorf("%s: 200", p)
		}
	}
}

// TestBrowserCancelRunningRun cancels a run whose node is running from
// the browser, through the confirmation page: the run ends canceled, its
// page says so, and the journal says who canceled it.
func TestBrowserCancelRunningRun(t *testing.T) {
	w := newWorldWith(t, withLauncher)
	done := make(chan *runtime.Summary)
	go func() {
		sum, _ := w.seed.runErr(w.runs, "run-live", loopBP("loop", "wait", "[pass]"), nil)
		done <- sum
	}()
	wait.Until(t, "the live run started implement", func() bool {
		return strings.Contains(readFile(filepath.Join(w.runs, "run-live", "events.jsonl")), `"node":"implement"`)
	})
	ctx, dialogs := browser(t)
	// The live page re-renders as the run goes on, so a node one query
	// finds may be gone at the next: each click is made in the page itself.
	click := func(sel string) {
		t.Helper()
		if !eval[bool](t, ctx, `(e => e ? (e.click(), true) : false)(document.querySelector(`+strconv.Quote(sel)+`))`) {
			t.Fatalf("no %s on the page", sel)
		}
	}
	must(t, chromedp.Do(ctx, chromedp.Navigate(w.ts.URL+"/run/0/run-live"),
		chromedp.WaitReady(chromedp.CSS(`g.node[data-node="implement"][data-state="running"]`)),
		chromedp.WaitReady(chromedp.CSS(`a.act-cancel`))))
	click(`a.act-cancel`)
	must(t, chromedp.Do(ctx, chromedp.WaitReady(chromedp.CSS(`button.confirm.act-cancel`))))
	click(`button.confirm.act-cancel`)
	must(t, chromedp.Do(ctx, chromedp.WaitReady(chromedp.CSS(`#run-status.s-canceled`))))
	sum := <-done
	if sum == nil {
		t.Fatal("the run failed to run")
	}
	if sum.Status != runtime.StatusCanceled || !strings.Contains(sum.Reason, "by tester") {
		t.Fatalf("run ended %s (%s)", sum.Status, sum.Reason)
	}
	if got := eval[string](t, ctx, `document.getElementById("done").innerText`); !strings.Contains(got, "tester cancel") {
		t.Errorf("the page's action journal reads %q", got)
	}
	if dialogs.Load() != 0 {
		t.Error("the confirmation used a dialog")
	}
}

func (l launcher) Resume(_ context.Context, runDir, by string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.calls = append(l.calls, fmt.Sprintf("resume %s %s", filepath.Base(runDir), by))
	return l.fail
}
