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

// TestRunPageShowsCandidatesByAttempt: without change.patch the change
// section shows the last candidate a gate judged, and below it the
// candidate of every gate attempt, oldest first, attempts that judged the
// same diff folded into one; their text stays inert.
func TestRunPageShowsCandidatesByAttempt(t *testing.T) {
	w := newWorld(t, "")
	writeCandidates(t, filepath.Join(w.runs, "run-ok"))
	_, body := get(t, w.ts.Client(), w.ts.URL+"/run/0/run-ok")
	change, _, _ := strings.Cut(body[strings.Index(body, `<section id="change">`)+1:], "</section>")
	for _, want := range []string{`the current candidate, candidate.diff`, `id="change-by-attempt"`,
		`<summary>check #1, implement #2 · 1 files: calc.go</summary>`, `<summary>check #2 · 1 files: calc.go</summary>`,
		`&#43;return a * b // &lt;img src=x onerror=alert(1)&gt;`} {
		if !strings.Contains(change, want) {
			t.Errorf("the change section lacks %q", want)
		}
	}
	// The current candidate is the last one judged: its diff comes first.
	if i, j := strings.Index(change, "a &#43; b"), strings.Index(change, "a * b"); i < 0 || j < 0 || i > j {
		t.Errorf("the current candidate is not the last judged (a + b at %d, a * b at %d)", i, j)
	}
	if strings.Count(change, `class="candidate"`) != 2 {
		t.Errorf("want 2 candidates by attempt, the same diff folded:\n%s", change)
	}
	if strings.Contains(body, "<img src=x") || strings.Contains(body, "\x1b") || strings.Contains(body, "\x07") {
		t.Error("a candidate's markup or escape reached the page as it is")
	}
	// The attempt's own section does not repeat it.
	if strings.Contains(body, "<h4>candidate.diff</h4>") {
		t.Error("the attempts section repeats the candidates")
	}
}

// writeCandidates leaves in run the candidate.diff files of two gate
// attempts and of the implement attempt between them: check #1 and
// implement #2 judged the same diff (a * b, with markup and terminal
// escapes in it), check #2 the last one (a + b).
func writeCandidates(t *testing.T, run string) {
	first := "diff --git a/calc.go b/calc.go\n--- a/calc.go\n+++ b/calc.go\n@@ -1 +1 @@\n-return a - b\n+return a * b // <img src=x onerror=alert(1)>\x1b]0;pwn\x07\n"
	second := strings.Replace(first, "a * b", "a + b", 1)
	writeFile(t, filepath.Join(run, "nodes", "check", "1", "candidate.diff"), first)
	writeFile(t, filepath.Join(run, "nodes", "implement", "2", "candidate.diff"), first)
	writeFile(t, filepath.Join(run, "nodes", "check", "2", "candidate.diff"), second)
}
