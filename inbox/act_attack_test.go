package inbox_test

import (
	"context"
	"net/http"
	"net/url"

	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/fstest"

	"github.com/sandgate/sandgate/inbox"
)

// slowLauncher is a launcher whose re-run waits until the test lets it
// go, as a real one waits while the new run sets up.
type slowLauncher struct {
	launcher
	calls   *atomic.Int32
	entered chan struct{}
	release chan struct{}
}

// Rerun holds the first call until release; later ones (what the attack
// must not reach) go straight on, so the test cannot hang on them.
func (l slowLauncher) Rerun(ctx context.Context, runDir, by string) (string, error) {
	if l.calls.Add(1) == 1 {
		l.entered <- struct{}{}
		<-l.release
	}
	return l.launcher.Rerun(ctx, runDir, by)
}

// postTwice posts form to url, and once the first post's action has
// entered (and waits for release), posts it again; it returns both
// statuses and the second's body.
func postTwice(c *http.Client, url string, form url.Values, entered, release chan struct{}) (first, second int, body string) {
	post := func() (int, string) {
		resp, err := c.PostForm(url, form)
		if err != nil {
			return 0, err.Error()
		}
		return resp.StatusCode, readAll(resp)
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); first, _ = post() }()
	<-entered
	second, body = post()
	close(release)
	wg.Wait()
	return first, second, body
}

// TestAttackDoubleSubmitOneAction: a confirm button clicked twice (or
// the form posted twice by a script with the page's token) sends two
// re-runs of one run at once. One starts a run; the other is told an
// action on that run is under way, and starts nothing.
func TestAttackDoubleSubmitOneAction(t *testing.T) {
	l := slowLauncher{calls: &atomic.Int32{}, entered: make(chan struct{}, 1), release: make(chan struct{})}
	w := newWorldW(t, func(w *world, o *inbox.Options) {
		l.launcher = launcher{w.acts}
		o.Actions = l
	})
	c := client(nil)
	_, page := get(t, c, w.ts.URL+"/run/0/run-ok/confirm/rerun")
	form := url.Values{"csrf": {csrfIn(page)}}
	first, second, body := postTwice(c, w.ts.URL+"/run/0/run-ok/act/rerun", form, l.entered, l.release)
	if first != http.StatusSeeOther || second != http.StatusConflict || !strings.Contains(body, "under way") {
		t.Errorf("first %d, second %d: %.300s", first, second, body)
	}
	if n := strings.Count(strings.Join(w.acts.list(), "\n"), "rerun run-ok"); n != 1 {
		t.Errorf("%d re-runs: %v", n, w.acts.list())
	}

}

// slowStarter holds its first start until the test lets it go.
type slowStarter struct {
	starter
	calls   *atomic.Int32
	entered chan struct{}
	release chan struct{}
}

func (s slowStarter) Start(ctx context.Context, name string, inputs, labels map[string]string, runsDir, by string) (string, error) {
	if s.calls.Add(1) == 1 {
		s.entered <- struct{}{}
		<-s.release
	}
	return s.starter.Start(ctx, name, inputs, labels, runsDir, by)
}

// TestAttackDoubleSubmitOneStart: the start form's confirmation posted
// twice while the first is starting starts one run.
func TestAttackDoubleSubmitOneStart(t *testing.T) {
	l := slowStarter{calls: &atomic.Int32{}, entered: make(chan struct{}, 1), release: make(chan struct{})}
	fsys := fstest.MapFS{"calc.yaml": {Data: []byte(taskBP("calc", "[pass]"))}}
	w := newWorldW(t, func(w *world, o *inbox.Options) {
		o.Blueprints = fsys
		l.starter = starter{launcher: launcher{o.Actions.(*actions)}, seed: w.seed, fsys: fsys}
		o.Actions = l
	})
	c := client(nil)
	_, page := get(t, c, w.ts.URL+"/start/calc")
	form := url.Values{"csrf": {csrfIn(page)}, "in.task": {"Fix TestAdd"}, "confirm": {"yes"}}
	first, second, body := postTwice(c, w.ts.URL+"/start/calc", form, l.entered, l.release)
	if first != http.StatusSeeOther || second != http.StatusConflict || l.calls.Load() != 1 {
		t.Errorf("first %d, second %d, %d starts: %.300s", first, second, l.calls.Load(), body)
	}
}
