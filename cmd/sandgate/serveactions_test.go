package main

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sandgate/sandgate/runtime"
)

// TestServeAnswerOutlivesRequest: the request that answered may end at
// once (a browser that leaves); the answered run goes on to success, its
// process is reaped, and a second answer to the finished run is refused
// before anything is written: no child, no answer log.
func TestServeAnswerOutlivesRequest(t *testing.T) {
	fix := modelScript(t, `- tool_calls: [{function: {name: edit_file, arguments: {path: calc.go, old: "a - b", new: "a + b"}}}]
- tool_calls: [{function: {name: finish, arguments: {summary: fixed}}}]
`)
	w := newInboxWorld(t, fix)
	dir := handedOffRun(t, w.repo, w.runs, writeBlueprint(t, answerE2E))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_ = w.acts.Answer(ctx, dir, "implement", "Add must add: use a + b", "ana")
	w.acts.wait()
	sum, err := runtime.Summarize(dir)
	if err != nil || sum.Status != runtime.StatusSucceeded {
		t.Fatalf("the answered run after its request was gone: %+v %v\n%s", sum, err, readLogs(dir))
	}
	if z := zombies(t); len(z) > 0 {
		t.Fatalf("zombies: %v", z)
	}
	err = w.acts.Answer(context.Background(), dir, "implement", "again", "ana")
	if !errors.Is(err, runtime.ErrNotAnswerable) || !strings.Contains(err.Error(), "is succeeded, not handed off") {
		t.Fatalf("answering a succeeded run: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "answer-2.log")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a refused answer left answer-2.log: %v", err)
	}
}

// TestServeDecideReportsErrors: a reject that could not delete a branch
// someone moved still rejects, and says both; a second decision is
// refused with the queue's reason.
func TestServeDecideReportsErrors(t *testing.T) {
	w := newInboxWorld(t, "")
	remote := bareClone(t, w.repo)
	e := w.reviewedRun(t, strings.NewReplacer("NAME", "moved", "BRANCH", "fix/add").Replace(e2eReviewBlueprint), remote)
	base := gitRev(remote, "refs/heads/main")
	if out, err := exec.Command("git", "--git-dir="+remote, "update-ref", "refs/heads/fix/add", base).CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	err := w.acts.Decide(context.Background(), w.reviews, e.ID, false, "no", "ana")
	if err == nil || !strings.Contains(err.Error(), e.ID+" is rejected, but") {
		t.Fatalf("reject with a moved branch: %v", err)
	}
	if gitRev(remote, "refs/heads/fix/add") != base {
		t.Fatalf("BREACH: reject deleted a branch someone moved")
	}
	err = w.acts.Decide(context.Background(), w.reviews, e.ID, true, "", "bob")
	if err == nil || !strings.Contains(err.Error(), "already decided") {
		t.Fatalf("approving a rejected entry: %v", err)
	}
	if m, _ := filepath.Glob(filepath.Join(w.reviews, e.ID, "entry.json")); len(m) != 1 {
		t.Fatal("entry gone")
	}
}
