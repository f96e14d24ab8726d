package checks_test

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/sandgate/sandgate/nodes/internal/nodetest"
	sgruntime "github.com/sandgate/sandgate/runtime"
)

func patchBlueprint(extra string) string {
	return `version: 1
name: patch
inputs:
  patch: {required: true}
start: prep
nodes:
  prep: {type: shell, run: PREP, next: apply}
  apply:
    type: apply_patch
    patch: "${{ inputs.patch }}"` + extra + `
    on_pass: test
    on_fail: no
  test: {type: test, run: go test -json ./..., on_pass: ok, on_fail: no}
  ok: {type: succeed}
  no: {type: fail, reason: patch refused}
`
}

func TestApplyPatch(t *testing.T) {
	repo := nodetest.SeedRepo(t)
	cases := []struct {
		name, prep, patch, extra string
		want                     sgruntime.Status
		feedback                 string
	}{
		{"applies and tests pass", "true", nodetest.FixPatch, "", sgruntime.StatusSucceeded, ""},
		{"conflict names the hunk", "true", strings.Replace(nodetest.FixPatch, "a - b }", "a * b }", 1), "", sgruntime.StatusFailed, "hunk 1"},
		{"absolute path", "true", strings.ReplaceAll(nodetest.FixPatch, "a/calc.go", "/etc/calc.go"), "", sgruntime.StatusFailed, "absolute paths are not allowed"},
		{"dot dot", "true", strings.ReplaceAll(strings.ReplaceAll(nodetest.FixPatch, "a/calc.go", "a/../calc.go"), "b/calc.go", "b/../calc.go"), "", sgruntime.StatusFailed, `".." is not allowed`},
		{"git dir", "true", "--- /dev/null\n+++ b/.git/hooks/pre-commit\n@@ -0,0 +1 @@\n+evil\n", "", sgruntime.StatusFailed, ".git is not yours"},
		{"git dir in another spelling and deeper", "true", "--- /dev/null\n+++ b/sub/.GIT/config\n@@ -0,0 +1 @@\n+evil\n", "", sgruntime.StatusFailed, ".git is not yours"},
		{"symlink out", "ln -s /etc evil", "--- /dev/null\n+++ b/evil/pwned\n@@ -0,0 +1 @@\n+x\n", "", sgruntime.StatusFailed, "resolves outside the workspace"},
		{"not a patch", "true", "hello", "", sgruntime.StatusFailed, "does not parse"},
		{"preview applies nothing", "true", nodetest.FixPatch, "\n    preview: true", sgruntime.StatusFailed, "Add(2, 3) = -1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src := strings.Replace(patchBlueprint(c.extra), "PREP", nodetest.Quote(c.prep), 1)
			sum := nodetest.NewHarness(t, repo).Run(t, src, map[string]any{"patch": c.patch})
			if sum.Status != c.want {
				t.Fatalf("status %s (%s)", sum.Status, sum.Reason)
			}
			if c.feedback != "" {
				var fb string
				for _, a := range sum.Attempts {
					fb += a.Feedback
				}
				if !strings.Contains(fb, c.feedback) {
					t.Fatalf("feedback lacks %q:\n%s", c.feedback, fb)
				}
			}
		})
	}
}

func TestParity(t *testing.T) {
	repo := nodetest.SeedRepo(t)
	ver := strings.TrimPrefix(runtime.Version(), "go")
	mm := strings.Join(strings.Split(ver, ".")[:2], ".")
	cases := []struct {
		name, files, tools string
		pass               bool
	}{
		{"matching go", "", "{go: \"" + mm + "\"}", true},
		{"old go pinned", "", "{go: \"1.19\"}", false},
		{"go.mod needs a newer go", "go.mod=module calc\n\ngo 9.99\n", "{}", false},
		{"missing tool", "", "{zig: \"0.13\"}", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := repo
			if c.files != "" {
				r = nodetest.SeedRepo(t)
				name, content, _ := strings.Cut(c.files, "=")
				os.WriteFile(filepath.Join(r, name), []byte(content), 0o644)
				nodetest.Run(t, r, "git", "-c", "user.name=d", "-c", "user.email=d@d", "commit", "-qam", "pin")
			}
			sum, a := nodetest.GateRun(t, r, "", "type: parity\ntools: "+c.tools)
			if (sum.Status == sgruntime.StatusSucceeded) != c.pass {
				t.Fatalf("status %s: %s", sum.Status, a.Feedback)
			}
		})
	}
}
