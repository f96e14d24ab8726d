package runtime_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sandgate/sandgate/runtime"
)

// TestRunLabels: a run's labels are kept in meta.json and come back in
// its summary (run.json); labels that break the rules start no run and
// every one is named.
func TestRunLabels(t *testing.T) {
	f := newFixture(t, retryLoop("[pass]", ""))
	labels := runtime.Labels{"team": "infra", "ticket/id": "OPS-7<b>"}
	sum, err := f.rt.Run(t.Context(), f.bp, runtime.RunOptions{Workspace: f.ws, Inputs: map[string]any{"task": "x"}, Labels: labels})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Labels["team"] != "infra" || sum.Labels["ticket/id"] != "OPS-7<b>" {
		t.Fatalf("summary labels = %v", sum.Labels)
	}
	again, err := runtime.Summarize(sum.Dir)
	if err != nil || again.Labels["team"] != "infra" {
		t.Fatalf("Summarize labels = %v, %v", again, err)
	}
	if b, _ := os.ReadFile(filepath.Join(sum.Dir, "meta.json")); !strings.Contains(string(b), `"labels": {`) {
		t.Fatalf("meta.json has no labels:\n%s", b)
	}

	bad := runtime.Labels{"": "x", "-a": "x", "ok": "line\nbreak", "esc": "\x1b[2J", "long": strings.Repeat("v", 201), "sp": "a b"}
	_, err = f.rt.Run(t.Context(), f.bp, runtime.RunOptions{Workspace: f.ws, Inputs: map[string]any{"task": "x"}, Labels: bad})
	if err == nil {
		t.Fatal("a run with bad labels started")
	}
	for _, name := range []string{`label ""`, `label "-a"`, "label ok:", "label esc:", "label long:", "label sp:"} {
		if !strings.Contains(err.Error(), name) {
			t.Errorf("error does not name %s:\n%v", name, err)
		}
	}
}

func TestParseLabel(t *testing.T) {
	for s, ok := range map[string]bool{"team=infra": true, "a.b/c-d_e=": true, "team": false, "=x": false, "a b=c": false, "é=x": false} {
		if _, _, err := runtime.ParseLabel(s); (err == nil) != ok {
			t.Errorf("ParseLabel(%q) = %v, want ok %v", s, err, ok)
		}
	}
}
