package checks_test

import (
	"strings"
	"testing"

	"github.com/sandgate/sandgate/nodes/internal/nodetest"
	"github.com/sandgate/sandgate/runtime"
)

func TestProtectEditedTests(t *testing.T) {
	repo := nodetest.SeedRepo(t)
	cheat := "sed -i 's/want 5/want -1/; s/got != 5/got != -1/' calc_test.go"
	sum, a := nodetest.GateRun(t, repo, cheat, "type: protect\npaths: ['*_test.go', '.github/**']")
	if sum.Status != runtime.StatusFailed || !strings.Contains(a.Feedback, "calc_test.go") {
		t.Fatalf("editing a test was not caught: %s %q", sum.Status, a.Feedback)
	}
	// With revert, the edit is undone and the real test fails again.
	src := `version: 1
name: g
start: cheat
nodes:
  cheat: {type: shell, run: "` + cheat + `", next: guard}
  guard: {type: protect, paths: ["*_test.go"], action: revert, next: test}
  test: {type: test, run: go test -json ./..., on_pass: ok, on_fail: no}
  ok: {type: succeed}
  no: {type: fail}
`
	sum = nodetest.NewHarness(t, repo).Run(t, src, nil)
	if sum.Status != runtime.StatusFailed {
		t.Fatalf("the reverted test should fail again; run %s", sum.Status)
	}
}
