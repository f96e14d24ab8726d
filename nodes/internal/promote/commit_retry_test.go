package promote_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sandgate/sandgate/internal/gitfixture"
	"github.com/sandgate/sandgate/nodes/internal/nodetest"
	"github.com/sandgate/sandgate/runtime"
)

// retryPipeline commits and pushes v1 of f.txt, a CI stand-in fails it,
// the fix node writes v2, and that is committed and pushed again, then
// pushed once more unchanged.
const retryPipeline = `version: 1
name: retry
start: fix
nodes:
  fix: {type: shell, run: "if [ -f f.txt ]; then echo v2 > f.txt; else echo v1 > f.txt; fi", next: guard}
  guard: {type: protect, paths: ["ci/**"], on_pass: commit, on_fail: stuck}
  commit: {type: git_commit, branch: fix/f, message: "fix f.txt, try ${{ attempts.commit }}", next: push}
  push: {type: git_push, remote: REMOTE, on_pass: ci, on_fail: refused}
  ci: {type: shell, run: "grep -q v2 f.txt", on_pass: again, on_fail: {to: fix, max: 1}}
  again: {type: git_push, remote: REMOTE, on_pass: done, on_fail: refused}
  done: {type: succeed}
  stuck: {type: handoff}
  refused: {type: handoff}
`

// finished lists a node's finished events in order.
func finished(t *testing.T, dir, node string) []runtime.Event {
	t.Helper()
	var out []runtime.Event
	for _, ev := range nodetest.ReadEvents(t, dir) {
		if ev.Type == runtime.EvNodeFinished && ev.Node == node {
			out = append(out, ev)
		}
	}
	return out
}

// retryRemote is a bare clone of repo to push to, with hook (a script's
// text; "" for none) as its post-receive hook.
func retryRemote(t *testing.T, repo, hook string) string {
	t.Helper()
	remote := filepath.Join(t.TempDir(), "remote.git")
	if err := gitfixture.Remote(repo, remote, hook); err != nil {
		t.Fatal(err)
	}
	// A non-fast-forward update would need --force; the remote refuses
	// even that, so a forced push would fail this test.
	nodetest.Run(t, remote, "git", "config", "receive.denyNonFastForwards", "true")
	return remote
}

// TestRetryCommitsOnTopOfTheRunsCommit: the second attempt's commit is a
// child of the first, its push fast-forwards the same remote branch, and
// pushing the same commit again changes nothing.
func TestRetryCommitsOnTopOfTheRunsCommit(t *testing.T) {
	repo := nodetest.SeedRepo(t)
	remote := retryRemote(t, repo, "")
	sum := nodetest.NewHarness(t, repo).Run(t, strings.ReplaceAll(retryPipeline, "REMOTE", remote), nil)
	if sum.Status != runtime.StatusSucceeded {
		for _, n := range []string{"commit", "push", "ci", "again"} {
			for _, ev := range finished(t, sum.Dir, n) {
				t.Logf("%s: %s %s %v", n, ev.Outcome, ev.Feedback, ev.Outputs)
			}
		}
		t.Fatalf("run %s: %s", sum.Status, sum.Reason)
	}
	commits := finished(t, sum.Dir, "commit")
	if len(commits) != 2 {
		t.Fatalf("%d commits", len(commits))
	}
	first, second := commits[0].Outputs["commit"].(string), commits[1].Outputs["commit"].(string)
	if commits[1].Outputs["parent"] != first || commits[1].Outputs["attempt"] != 2.0 {
		t.Fatalf("second commit %v does not build on the first %s", commits[1].Outputs, first)
	}
	if tip := nodetest.Run(t, remote, "git", "rev-parse", "fix/f"); tip != second {
		t.Fatalf("remote fix/f at %s, want %s", tip, second)
	}
	if parent := nodetest.Run(t, remote, "git", "rev-parse", "fix/f^"); parent != first {
		t.Fatalf("remote fix/f^ is %s, want the first commit %s", parent, first)
	}
	if v := nodetest.Run(t, remote, "git", "show", "fix/f:f.txt") + nodetest.Run(t, remote, "git", "show", "fix/f^:f.txt"); v != "v2v1" {
		t.Fatalf("f.txt at the two commits: %q", v)
	}
	log := nodetest.Run(t, remote, "git", "log", "--format=%B--", "fix/f")
	t.Logf("history:\n%s", log)
	if !strings.Contains(log, "Sandgate-Attempt: 2") || strings.Count(log, "fix f.txt, try") != 2 {
		t.Fatalf("history does not tell the attempts apart:\n%s", log)
	}
	var pushed []any
	for _, node := range []string{"push", "again"} {
		for _, ev := range finished(t, sum.Dir, node) {
			pushed = append(pushed, ev.Outputs["pushed"])
		}
	}
	if len(pushed) != 3 || pushed[0] != true || pushed[1] != true || pushed[2] != false {
		t.Fatalf("pushes (first, retry, same commit again): %v", pushed)
	}
	nodetest.Run(t, remote, "git", "fsck", "--connectivity-only", "--no-dangling")
}

// TestPushRefusesABranchSomeoneElseMoved: after the run's first push,
// someone else adds a commit to the branch. The retry's push must fail,
// saying so, and leave their commit in place.
func TestPushRefusesABranchSomeoneElseMoved(t *testing.T) {
	hook := `#!/bin/sh
read old new ref
test -f moved && exit 0
touch moved
export GIT_AUTHOR_NAME=other GIT_AUTHOR_EMAIL=other@example.com GIT_COMMITTER_NAME=other GIT_COMMITTER_EMAIL=other@example.com
c=$(echo "someone else's fix" | git commit-tree "$new^{tree}" -p "$new") && git update-ref "$ref" "$c" && echo "$c" > other
`
	repo := nodetest.SeedRepo(t)
	remote := retryRemote(t, repo, hook)
	sum := nodetest.NewHarness(t, repo).Run(t, strings.ReplaceAll(retryPipeline, "REMOTE", remote), nil)
	pushes := finished(t, sum.Dir, "push")
	if sum.Status != runtime.StatusHandedOff || len(pushes) != 2 || pushes[1].Outcome != runtime.OutcomeFail {
		t.Fatalf("run %s (%s), pushes %v: the retry's push did not fail", sum.Status, sum.Reason, pushes)
	}
	t.Logf("feedback: %s", pushes[1].Feedback)
	if !strings.Contains(pushes[1].Feedback, "someone else moved it") || !strings.Contains(pushes[1].Feedback, "nothing was overwritten") {
		t.Fatalf("unclear refusal: %q", pushes[1].Feedback)
	}
	other, err := os.ReadFile(filepath.Join(remote, "other"))
	if err != nil {
		t.Fatalf("the hook never moved the branch: %v", err)
	}
	if !strings.Contains(pushes[1].Feedback, "to "+string(other)[:12]+", not this run's") {
		t.Fatalf("the refusal does not name the commit the branch holds (%.12s): %q", other, pushes[1].Feedback)
	}
	if tip := nodetest.Run(t, remote, "git", "rev-parse", "fix/f"); tip != strings.TrimSpace(string(other)) {
		t.Fatalf("remote fix/f at %s: someone else's commit %s was overwritten", tip, other)
	}
}
