package ci_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sandgate/sandgate/internal/gocanary/gocanarytest"
	"github.com/sandgate/sandgate/nodes/internal/nodetest"
	"github.com/sandgate/sandgate/runtime"
)

// ciOnly commits the change (PLANT), pushes it and runs clean-checkout
// CI on it; the only gate before (promotion needs one) is a diff_cap,
// which runs no test: CI alone judges the tests.
const ciOnly = `version: 1
name: ci-only
start: plant
nodes:
  plant: {type: shell, run: "PLANT", next: cap}
  cap: {type: diff_cap, max_lines: 1000, on_pass: commit, on_fail: failed}
  commit: {type: git_commit, branch: fix/add, message: "fix: Add adds", next: push}
  push: {type: git_push, remote: REMOTE, next: ci}
  ci: {type: ci, provider: command, run: go test -json ./..., on_pass: done, on_fail: failed}
  done: {type: succeed}
  failed: {type: handoff}
`

// TestAttackForgersFailCI: the forgers of gocanarytest, committed beside
// the bug, rewrite go test's report in the clean-checkout box; the ci
// node's command provider seals and canaries the command as the test
// gate does, and must fail the commit as forged.
func TestAttackForgersFailCI(t *testing.T) {
	repo := nodetest.SeedRepo(t)
	for _, f := range gocanarytest.Forgers("calc") {
		t.Run(f.Name, func(t *testing.T) {
			bare := filepath.Join(t.TempDir(), "remote.git")
			nodetest.Run(t, "", "git", "init", "-q", "--bare", bare)
			plant := "cat > " + f.File + " <<'EOF'\n" + f.Source + "EOF"
			src := strings.NewReplacer("REMOTE", nodetest.Quote(bare), `"PLANT"`, fmt.Sprintf("%q", plant)).Replace(ciOnly)
			sum := nodetest.NewHarness(t, repo).Run(t, src, nil)
			var ev *runtime.Event
			for _, e := range nodetest.ReadEvents(t, sum.Dir) {
				if e.Type == runtime.EvNodeFinished && e.Node == "ci" {
					ev = &e
				}
			}
			if ev == nil {
				t.Fatalf("ci never finished: run %s %q", sum.Status, sum.Reason)
			}
			if ev.Outcome == runtime.OutcomePass || sum.Status == runtime.StatusSucceeded {
				t.Fatalf("a forged report passed clean-checkout CI: %s\n%s", ev.Outcome, ev.Feedback)
			}
			if !strings.Contains(ev.Feedback, "report for package calc is forged") {
				t.Errorf("CI did not find the forgery:\n%s", ev.Feedback)
			}
		})
	}
}
