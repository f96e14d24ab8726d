package main

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sandgate/sandgate/nodes"
)

// Its gate is a diff_cap: promotion needs a passing verdict, and what is
// checked here is the CLI's, not a test gate's (which would cost a judge
// box running go test on every run).
const rejectBlueprint = `version: 1
name: reject
start: fix
nodes:
  fix: {type: shell, run: "sed -i 's/a - b/a + b/' calc.go", next: cap}
  cap: {type: diff_cap, max_lines: 20, on_pass: commit, on_fail: stuck}
  commit: {type: git_commit, branch: fix/add, message: "fix: Add adds", next: push}
  push: {type: git_push, remote: REMOTE, delete_on_reject: true, next: review}
  review: {type: review, dir: REVIEWS, next: done}
  done: {type: succeed}
  stuck: {type: handoff}
`

// runToReview runs rejectBlueprint on a new repository, pushing to a new
// bare remote and queueing the change for review.
func runToReview(t *testing.T) (repo, runs, reviews, remote string) {
	t.Helper()
	repo, runs, reviews = gitRepo(t), t.TempDir(), t.TempDir()
	remote = filepath.Join(t.TempDir(), "remote.git")
	if out, err := exec.Command("git", "init", "-q", "--bare", remote).CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	bp := writeBlueprint(t, strings.NewReplacer("REMOTE", remote, "REVIEWS", reviews).Replace(rejectBlueprint))
	if code, out, errs := runCLI("run", bp, "--repo", repo, "--runs-dir", runs); code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	return repo, runs, reviews, remote
}

// TestReviewRejectDeletesPushedBranch: rejecting deletes the branch the
// run pushed (delete_on_reject), but never a branch someone moved since.
func TestReviewRejectDeletesPushedBranch(t *testing.T) {
	for _, moved := range []bool{false, true} {
		repo, _, reviews, remote := runToReview(t)
		branch := func() string {
			out, _ := exec.Command("git", "--git-dir="+remote, "rev-parse", "--verify", "-q", "refs/heads/fix/add").Output()
			return strings.TrimSpace(string(out))
		}
		if branch() == "" {
			t.Fatal("run did not push fix/add")
		}
		if moved { // someone else's work lands on the branch
			base, _ := exec.Command("git", "-C", repo, "rev-parse", "HEAD").Output()
			exec.Command("git", "--git-dir="+remote, "update-ref", "refs/heads/fix/add", strings.TrimSpace(string(base))).Run()
		}
		before := branch()
		ids, _ := filepath.Glob(filepath.Join(reviews, "*", "entry.json"))
		if len(ids) != 1 {
			t.Fatalf("review entries %v", ids)
		}
		id := filepath.Base(filepath.Dir(ids[0]))
		code, out, errs := runCLI("review", "reject", id, "--dir", reviews)
		t.Logf("moved=%v: %s%s", moved, out, errs)
		switch {
		case !moved && (code != exitOK || branch() != ""):
			t.Errorf("reject: exit %d, branch %q left on the remote\n%s%s", code, branch(), out, errs)
		case moved && (code != exitFailed || branch() != before):
			t.Errorf("BREACH: reject deleted a branch someone moved (exit %d, now %q)\n%s%s", code, branch(), out, errs)
		}
		if _, out, _ := runCLI("review", "list", "--dir", reviews); !strings.Contains(out, "rejected") {
			t.Errorf("entry not rejected:\n%s", out)
		}
	}
}

// TestReviewQueueCLI: list, show (summary, verdict and the diff), approve
// with a note, and the errors for an unknown entry or a missing id.
func TestReviewQueueCLI(t *testing.T) {
	_, _, reviews, _ := runToReview(t)
	ids, _ := filepath.Glob(filepath.Join(reviews, "*", "entry.json"))
	if len(ids) != 1 {
		t.Fatalf("review entries %v", ids)
	}
	id := filepath.Base(filepath.Dir(ids[0]))
	code, out, _ := runCLI("review", "list", "--dir", reviews)
	if code != exitOK || !strings.Contains(out, id) || !strings.Contains(out, "pending") || !strings.Contains(out, "fix/add") {
		t.Fatalf("list: exit %d\n%s", code, out)
	}
	code, out, _ = runCLI("review", "show", id, "--dir", reviews)
	if code != exitOK || !strings.Contains(out, "+func Add(a, b int) int { return a + b }") || !strings.Contains(out, "-func Add(a, b int) int { return a - b }") {
		t.Fatalf("show: exit %d, want the diff\n%s", code, out)
	}
	code, out, _ = runCLI("review", "approve", id, "--note", "looks right", "--dir", reviews)
	if code != exitOK || !strings.Contains(out, "approved") {
		t.Fatalf("approve: exit %d\n%s", code, out)
	}
	// The review node declares no on_approve: approving merged nothing,
	// and says how to make it merge.
	if !strings.Contains(out, "nothing merged") || !strings.Contains(out, "on_approve: {merge_into: main}") {
		t.Errorf("approve without on_approve does not say how to merge:\n%s", out)
	}
	d, err := (&nodes.ReviewQueue{Dir: reviews}).Get(id)
	if err != nil || d.Entry.Status != "approved" || d.Entry.Note != "looks right" || d.Entry.Decided.IsZero() || d.Entry.DecidedBy == "" {
		t.Fatalf("entry after approve: %+v %v", d, err)
	}
	if code, _, errs := runCLI("review", "approve", "no-such-entry", "--dir", reviews); code != exitUsage || errs == "" {
		t.Errorf("unknown entry: exit %d %q", code, errs)
	}
	if code, _, _ := runCLI("review", "show", "--dir", reviews); code != exitUsage {
		t.Errorf("show without an id: exit %d", code)
	}
}
