package inbox_test

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sandgate/sandgate/runtime"
)

// TestLabelsShownAndFiltered: a run's labels show on its row and its
// page, each a link to the runs that have it, and label:NAME=VALUE finds
// exactly those runs; hostile label text (a meta.json written by hand,
// past `sandgate run`'s checks) is escaped.
func TestLabelsShownAndFiltered(t *testing.T) {
	w := newWorld(t, "")
	_, err := w.seed.runOpts(w.runs, "run-infra", taskBP("calc", "[pass]"), runtime.RunOptions{
		Inputs: map[string]any{"task": "Fix TestAdd"}, Labels: runtime.Labels{"team": "infra", "ticket": "OPS-7"}})
	must(t, err)
	_, err = w.seed.runOpts(w.runs, "run-web", taskBP("calc", "[pass]"), runtime.RunOptions{
		Inputs: map[string]any{"task": "Fix TestSub"}, Labels: runtime.Labels{"team": "infra-web"}})
	must(t, err)
	// A label no CLI would write: the page must still not run it.
	meta := filepath.Join(w.runs, "run-ok", "meta.json")
	b, err := os.ReadFile(meta)
	must(t, err)
	hostile := `"><script>alert(1)</script><img src=x onerror=alert(2)>`
	must(t, os.WriteFile(meta, []byte(strings.Replace(string(b), `"run_id"`, `"labels":{"x":"`+jsonEsc(hostile)+`"},"run_id"`, 1)), 0o644))

	c := w.ts.Client()
	for q, want := range map[string][]string{
		"label:team=infra":           {"run-infra"},
		"label:team=inf":             nil,
		"label:team":                 {"run-web", "run-infra"},
		"label:team=infra-web":       {"run-web"},
		"label:ticket=OPS-7 testadd": {"run-infra"},
		"label:ticket=ops-7":         nil, // labels match exactly, case included
		"ops-7":                      {"run-infra"},
	} {
		code, body := get(t, c, w.ts.URL+"/?q="+url.QueryEscape(q))
		if got := rowsOf(body); code != 200 || fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("q=%s: %d, rows %v, want %v", q, code, got, want)
		}
	}
	_, list := get(t, c, w.ts.URL+"/")
	if !strings.Contains(list, `<a class="label" href="/?q=label%3Ateam%3Dinfra" title="runs labelled team=infra">team=infra</a>`) {
		t.Errorf("the row does not link its label:\n%s", list)
	}
	_, page := get(t, c, w.ts.URL+"/run/0/run-infra")
	if !strings.Contains(page, `>ticket=OPS-7</a>`) {
		t.Errorf("the run page does not show its labels")
	}
	for _, p := range []string{"/", "/run/0/run-ok"} {
		_, body := get(t, c, w.ts.URL+p)
		if strings.Contains(body, "<script>alert") || strings.Contains(body, "<img src=x") {
			t.Errorf("%s renders a hostile label as HTML:\n%s", p, body)
		}
		if !strings.Contains(body, "&lt;script&gt;alert(1)") {
			t.Errorf("%s does not show the hostile label escaped", p)
		}
	}
}
