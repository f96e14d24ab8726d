package inbox_test

import (
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/sandgate/sandgate/internal/wait"
)

// TestBrowserStaleFragmentIgnored: the run page's live fragments can
// come back out of order (a loaded server answers the later request
// first). A fragment asked for before the newest output was written never
// replaces one asked for after it: otherwise a node that prints, then
// goes quiet, shows its older output (or none) until it prints again.
// The server here holds the first fragment back until the page shows
// the second, then sends it, marked.
func TestBrowserStaleFragmentIgnored(t *testing.T) {
	w := newWorld(t, "")
	startLive(t, w)
	var lives atomic.Int32
	held, release, sent := make(chan struct{}), make(chan struct{}), make(chan struct{})
	ts := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if !strings.HasSuffix(r.URL.Path, "/live") || lives.Add(1) != 1 {
			w.srv.ServeHTTP(rw, r)
			return
		}
		rec := httptest.NewRecorder()
		w.srv.ServeHTTP(rec, r)
		close(held)
		select {
		case <-release:
		case <-r.Context().Done():
		}
		rw.Header().Set("Content-Type", rec.Header().Get("Content-Type"))
		rw.WriteHeader(rec.Code)
		_, _ = rw.Write(append(rec.Body.Bytes(), `<i id="stale"></i>`...))
		close(sent)
	}))
	t.Cleanup(ts.Close)
	t.Cleanup(func() {
		select {
		case <-release:
		default:
			close(release)
		}
	})
	ctx, _ := browser(t)
	must(t, chromedp.Do(ctx, chromedp.Navigate(ts.URL+"/run/0/run-live"), chromedp.WaitReady(chromedp.CSS(`#live`)),
		chromedp.Evaluate[chromedp.Void](`window.sawStale = false; new MutationObserver(function () {
			if (document.getElementById("stale")) { window.sawStale = true; } }).observe(document.getElementById("live"), {childList: true, subtree: true})`)))
	log := filepath.Join(w.runs, "run-live", "nodes", "implement", "1", "output.log")
	text := func() string {
		return eval[string](t, ctx, `(document.getElementById("log-implement-1") || {textContent: ""}).textContent`)
	}
	writeFile(t, log, "one\n")
	<-held // the first fragment, with "one", waits
	appendFile(t, log, "two\n")
	wait.Until(t, "the second fragment shows", func() bool { return strings.Contains(text(), "two") })
	close(release)
	<-sent
	appendFile(t, log, "three\n")
	wait.Until(t, "the third fragment shows", func() bool { return strings.Contains(text(), "three") })
	if eval[bool](t, ctx, `window.sawStale`) {
		t.Fatal("the first fragment, older than the page, replaced it")
	}
}
