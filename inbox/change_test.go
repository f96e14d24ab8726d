package inbox_test

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestRunPageShowsChangeAndAttemptDiffs: the run page shows the current
// candidate's change.patch (its files and its lines, classed) and each
// diff an attempt left, as text: markup and terminal escapes in a diff
// are inert.
func TestRunPageShowsChangeAndAttemptDiffs(t *testing.T) {
	w := newWorld(t, "")
	run := filepath.Join(w.runs, "run-handoff")
	patch := "diff --git a/calc.go b/calc.go\n--- a/calc.go\n+++ b/calc.go\n@@ -1 +1 @@\n-return a - b\n+return a + b // <script>alert(1)</script>\x1b[2J\n"
	writeFile(t, filepath.Join(run, "change.patch"), patch)
	writeFile(t, filepath.Join(run, "nodes", "implement", "1", "proposal.diff"), strings.Replace(patch, "a + b", "a * b", 1))
	_, body := get(t, w.ts.Client(), w.ts.URL+"/run/0/run-handoff")
	for _, want := range []string{`<section id="change">`, `<summary>calc.go</summary>`, `<span class="d-add">&#43;return a &#43; b // &lt;script&gt;alert(1)&lt;/script&gt;\x1b[2J</span>`,
		`<span class="d-del">-return a - b</span>`, `<h4>proposal.diff</h4>`, `&#43;return a * b`, `href="#change"`} {
		if !strings.Contains(body, want) {
			t.Errorf("the run page lacks %q", want)
		}
	}
	if strings.Contains(body, "<script>alert") || strings.Contains(body, "\x1b") {
		t.Error("a diff's markup or escape reached the page as it is")
	}
	// A run without change.patch has no Change section.
	if _, body := get(t, w.ts.Client(), w.ts.URL+"/run/0/run-ok"); strings.Contains(body, `id="change"`) {
		t.Error("run-ok shows a change it has not")
	}
}
