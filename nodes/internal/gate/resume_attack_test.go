package gate_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sandgate/sandgate/nodes/internal/nodetest"
	"github.com/sandgate/sandgate/runtime"
)

// resumeFlow: the gate passes change A; then the agent's side (edit)
// turns it into B from inside the box, and also tries to reach the run
// directory, where verify.json holds the gates' verdicts. The run hands
// off; an answer starts git_commit in a resumed process, whose verdicts
// are reloaded from verify.json.
const resumeFlow = `version: 1
name: resume-verdict
start: fix
nodes:
  fix: {type: shell, run: "sed -i 's/a - b/a + b/' calc.go", next: test}
  test: {type: test, run: go test -json ./..., on_pass: edit, on_fail: stuck}
  edit: {type: shell, run: "EDIT", on_pass: wait, on_fail: commit}
  wait: {type: handoff}
  commit: {type: git_commit, branch: fix/add, message: "fix", next: done}
  done: {type: succeed}
  stuck: {type: handoff}
`

// TestAttackResumedVerdictPromotesOnlyWhatItJudged: a verdict reloaded
// from verify.json after the process ended stays bound to change A by its
// fingerprint, so the resumed git_commit refuses change B. The box can
// neither see nor write the run directory (so it cannot forge
// verify.json; a harness-side edit of the run directory is outside the
// threat model, like editing the harness's binary).
func TestAttackResumedVerdictPromotesOnlyWhatItJudged(t *testing.T) {
	runs, repo := t.TempDir(), nodetest.SeedRepo(t)
	dir := filepath.Join(runs, "r1")
	edit := "echo 'func Evil() int { return 666 }' >> calc.go && " +
		"test ! -e " + dir + "/verify.json && ! ls " + dir + " 2>/dev/null && ! touch " + dir + "/verify.json 2>/dev/null"
	h := nodetest.NewHarness(t, repo)
	h.RT.RunsDir = runs
	bp, err := h.RT.Registry.Parse("t.yaml", []byte(strings.Replace(resumeFlow, "EDIT", edit, 1)))
	if err != nil {
		t.Fatal(err)
	}
	sum, err := h.RT.Run(context.Background(), bp, runtime.RunOptions{RunID: "r1", Workspace: repo})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Status != runtime.StatusHandedOff || sum.Reason == "" {
		t.Fatalf("first leg: %s %q", sum.Status, sum.Reason)
	}
	edited := false
	for _, e := range nodetest.ReadEvents(t, dir) {
		edited = edited || e.Type == runtime.EvNodeFinished && e.Node == "edit" && e.Outcome == runtime.OutcomePass
	}
	if !edited {
		t.Fatalf("the box reached the run directory (or the edit failed): %s", sum.Reason)
	}
	if _, err := os.Stat(filepath.Join(dir, "verify.json")); err != nil {
		t.Fatalf("no verify.json to reload: %v", err)
	}
	sum, err = h.RT.Answer(context.Background(), dir, runtime.Answer{Node: "commit", By: "test"})
	if err != nil {
		t.Fatal(err)
	}
	var commit *runtime.Event
	for _, e := range nodetest.ReadEvents(t, dir) {
		if e.Type == runtime.EvNodeFinished && e.Node == "commit" {
			commit = &e
		}
	}
	if commit == nil {
		t.Fatalf("commit never ran: %s %q", sum.Status, sum.Reason)
	}
	t.Logf("commit: %s %q %s", commit.Outcome, commit.Reason, commit.Error)
	if commit.Outcome == runtime.OutcomePass || sum.Status == runtime.StatusSucceeded {
		t.Fatalf("the resumed git_commit promoted change B on change A's verdict: %+v", commit)
	}
	// Refused because the reloaded verdict is A's, not for want of one.
	if !strings.Contains(commit.Reason, "judged an earlier version of the change") {
		t.Errorf("refused for another reason: %q", commit.Reason)
	}
	if _, err := os.Stat(filepath.Join(dir, "commit.json")); err == nil {
		t.Fatal("a commit was written")
	}
}
