package inbox_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/chromedp/chromedp"
	"github.com/sandgate/sandgate/inbox"
	"github.com/sandgate/sandgate/internal/browsertest"
	"github.com/sandgate/sandgate/runtime"
)

// starter runs the started blueprint for real (the seed's runtime), as
// the CLI's starter would in a child.
type starter struct {
	launcher
	seed *seed
	fsys fstest.MapFS
}

func (s starter) Start(_ context.Context, name string, inputs, labels map[string]string, runsDir, by string) (string, error) {
	s.mu.Lock()
	s.calls = append(s.calls, fmt.Sprintf("start %s %v %v %s", name, inputs, labels, by))
	s.mu.Unlock()
	in := map[string]any{}
	for k, v := range inputs {
		in[k] = v
	}
	id := "run-started"
	_, err := s.seed.runOpts(runsDir, id, string(s.fsys[name+".yaml"].Data), runtime.RunOptions{Inputs: in, Labels: labels})
	return filepath.Join(runsDir, id), err
}

func startWorld(t *testing.T) *world {
	fsys := fstest.MapFS{"calc.yaml": {Data: []byte(taskBP("calc", "[pass]"))}, "notes.txt": {Data: []byte("not a blueprint")}}
	return newWorldW(t, func(w *world, o *inbox.Options) {
		o.Blueprints = fsys
		o.Actions = starter{launcher: launcher{o.Actions.(*actions)}, seed: w.seed, fsys: fsys}
	})
}

func TestStartFormFromInputs(t *testing.T) {
	w := startWorld(t)
	c := client(nil)
	_, list := get(t, c, w.ts.URL+"/start")
	if !strings.Contains(list, `href="/start/calc"`) || strings.Contains(list, "notes") {
		t.Fatalf("start list:\n%s", list)
	}
	_, form := get(t, c, w.ts.URL+"/start/calc")
	if !strings.Contains(form, `<textarea name="in.task" rows="4" required>`) {
		t.Fatalf("the form lacks the required task:\n%s", form)
	}
	for _, bad := range []string{"/start/..%2fcalc", "/start/notes", "/start/calc.yaml"} {
		if code, _ := get(t, c, w.ts.URL+bad); code != http.StatusBadRequest {
			t.Errorf("%s: %d, want 400", bad, code)
		}
	}
	post := func(form url.Values) (int, string) {
		return postForm(t, w, c, "/start/calc", "/start/calc", form)
	}
	if code, body := post(url.Values{}); code != http.StatusBadRequest || !strings.Contains(body, "task") {
		t.Errorf("no task: %d %s", code, body)
	}
	if code, _ := post(url.Values{"in.task": {"x"}, "in.evil": {"1"}}); code != http.StatusBadRequest {
		t.Errorf("an undeclared input: %d", code)
	}
	if code, body := post(url.Values{"in.task": {"Fix TestAdd"}}); code != 200 || !strings.Contains(body, `name="confirm" value="yes"`) {
		t.Errorf("a valid form did not ask to confirm: %d", code)
	}
	if code, body := post(url.Values{"in.task": {"x"}, "labels": {"team=infra\nbad label=x\nok=two words"}}); code != http.StatusBadRequest ||
		!strings.Contains(body, `label &#34;bad label&#34;`) || !strings.Contains(body, "label ok:") {
		t.Errorf("bad labels: %d, want 400 naming both:\n%s", code, body)
	}
	resp, err := c.PostForm(w.ts.URL+"/start/calc", url.Values{"in.task": {"x"}, "confirm": {"yes"}})
	must(t, err)
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("a start without the CSRF token: %d, want 403", resp.StatusCode)
	}
	if got := w.acts.list(); len(got) != 0 {
		t.Fatalf("started before the confirmation or without the token: %v", got)
	}
}

// TestBrowserStartRun fills the generated form, confirms, and lands on
// the new run, which succeeded with the typed task and records who
// started it.
func TestBrowserStartRun(t *testing.T) {
	w := startWorld(t)
	b := browsertest.Start(t)
	ctx := b.Ctx
	b.Do(t, chromedp.Navigate(w.ts.URL+"/start/calc"), chromedp.WaitReady(chromedp.CSS(`textarea[name="in.task"]`)))
	b.Type(t, `textarea[name="in.task"]`, "Fix TestAdd in calc.go")
	b.Type(t, `textarea[name="labels"]`, "team=infra")
	b.ClickThrough(t, `form.start button`, `button.confirm.act-start`)
	b.ClickThrough(t, `button.confirm.act-start`, `#run-status.s-succeeded`)
	if got := eval[string](t, ctx, `location.pathname`); got != "/run/0/run-started" {
		t.Fatalf("after starting the browser is on %s", got)
	}
	acts, _ := os.ReadFile(filepath.Join(w.runs, "run-started", inbox.ActionsFile))
	if !strings.Contains(string(acts), `"by":"tester","action":"started calc"`) {
		t.Errorf("actions.jsonl: %s", acts)
	}
	if got := w.acts.list(); len(got) != 1 || got[0] != "start calc map[task:Fix TestAdd in calc.go] map[team:infra] tester" {
		t.Errorf("calls %v", got)
	}
	if got := eval[string](t, ctx, `document.querySelector("ul.labels a.label").textContent`); got != "team=infra" {
		t.Errorf("the new run's page shows the label %q", got)
	}
}
