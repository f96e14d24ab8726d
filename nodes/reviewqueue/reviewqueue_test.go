package reviewqueue_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sandgate/sandgate/internal/gitfixture"
	"github.com/sandgate/sandgate/nodes"
	"github.com/sandgate/sandgate/nodes/internal/nodetest"
)

// landing is a reviewed change waiting in a local queue: a work
// repository, a bare remote whose main is the change's base and which holds
// the pushed branch fix/add, and the queue entry.
type landing struct {
	work, remote, base, commit string
	q                          *nodes.ReviewQueue
}

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := gitfixture.Git(dir, args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func newLanding(t *testing.T, method string) *landing {
	t.Helper()
	l := &landing{work: t.TempDir(), remote: filepath.Join(t.TempDir(), "remote.git")}
	if err := gitfixture.Seed(l.work, map[string]string{"calc.go": "package calc\n\nfunc Add(a, b int) int { return a - b }\n", "README": "calc\n"}, "init"); err != nil {
		t.Fatal(err)
	}
	l.base = git(t, l.work, "rev-parse", "HEAD")
	git(t, "", "clone", "-q", "--bare", l.work, l.remote)
	git(t, l.work, "checkout", "-q", "-b", "fix/add")
	l.commit = commitFile(t, l.work, "calc.go", "package calc\n\nfunc Add(a, b int) int { return a + b }\n", "fix: Add adds")
	git(t, l.work, "push", "-q", l.remote, "fix/add")
	l.q = &nodes.ReviewQueue{Dir: t.TempDir()}
	nodetest.WriteEntry(t, l.q.Dir, nodetest.ReviewID, nodes.ReviewEntry{Title: "fix: Add adds", Branch: "fix/add", Commit: l.commit, Base: l.base,
		Status: nodes.StatusPending, Created: time.Now().UTC(),
		OnApprove: &nodes.ApproveAction{MergeInto: "main", Method: method, Remote: l.remote}})
	return l
}

func commitFile(t *testing.T, dir, name, content, msg string) string {
	t.Helper()
	if err := gitfixture.Write(dir, map[string]string{name: content}); err != nil {
		t.Fatal(err)
	}
	if err := gitfixture.Commit(dir, "dev", msg); err != nil {
		t.Fatal(err)
	}
	return git(t, dir, "rev-parse", "HEAD")
}

// moveMain lands someone else's commit on the remote's main.
func (l *landing) moveMain(t *testing.T, name, content string) string {
	t.Helper()
	git(t, l.work, "checkout", "-q", "main")
	defer git(t, l.work, "checkout", "-q", "fix/add")
	c := commitFile(t, l.work, name, content, "someone else's change")
	git(t, l.work, "push", "-q", l.remote, "main")
	return c
}

func (l *landing) main(t *testing.T) string { return git(t, l.remote, "rev-parse", "refs/heads/main") }

func (l *landing) status(t *testing.T) string {
	t.Helper()
	d, err := l.q.Get(nodetest.ReviewID)
	if err != nil {
		t.Fatal(err)
	}
	return d.Entry.Status
}

// TestReviewApproveFastForwards: approving moves the remote's main to the
// reviewed commit and records who, when, the note and the landed commit.
func TestReviewApproveFastForwards(t *testing.T) {
	l := newLanding(t, "ff")
	e, err := l.q.Approve(context.Background(), nodetest.ReviewID, "ship it", "alice")
	if err != nil {
		t.Fatal(err)
	}
	if got := l.main(t); got != l.commit {
		t.Fatalf("main on the remote is %s, want the reviewed %s", got, l.commit)
	}
	d, _ := l.q.Get(nodetest.ReviewID)
	if e.Landed != l.commit || d.Entry.Status != nodes.StatusApproved || d.Entry.DecidedBy != "alice" || d.Entry.Note != "ship it" || d.Entry.Decided.IsZero() || d.Entry.Landed != l.commit {
		t.Fatalf("recorded entry: %+v", d.Entry)
	}
}

// TestReviewApproveMergesMovedTarget: with method merge, a main that moved
// since the run gets a merge commit of both.
func TestReviewApproveMergesMovedTarget(t *testing.T) {
	l := newLanding(t, "merge")
	moved := l.moveMain(t, "README", "calc, documented\n")
	e, err := l.q.Approve(context.Background(), nodetest.ReviewID, "", "bob")
	if err != nil {
		t.Fatal(err)
	}
	tip := l.main(t)
	if parents := git(t, l.remote, "rev-list", "--parents", "-n", "1", tip); parents != tip+" "+moved+" "+l.commit || e.Landed != tip {
		t.Fatalf("main %s: want a merge of %s and %s, got parents %q (landed %s)", tip, moved, l.commit, parents, e.Landed)
	}
	if got := git(t, l.remote, "show", tip+":calc.go") + git(t, l.remote, "show", tip+":README"); !strings.Contains(got, "a + b") || !strings.Contains(got, "documented") {
		t.Fatalf("merge lost a side:\n%s", got)
	}
	if msg := git(t, l.remote, "log", "-1", "--format=%B", tip); !strings.Contains(msg, "Approved-by: bob") {
		t.Fatalf("merge message: %q", msg)
	}
}

// TestReviewApproveRefusesWhatCannotLand: a fast-forward a moved main
// cannot take, and a merge that conflicts, fail clearly, push nothing and
// leave the entry pending.
func TestReviewApproveRefusesWhatCannotLand(t *testing.T) {
	for _, tc := range []struct{ method, file, want string }{
		{"ff", "README", "cannot fast-forward main"},
		{"merge", "calc.go", "conflicts in calc.go"},
	} {
		t.Run(tc.method, func(t *testing.T) {
			l := newLanding(t, tc.method)
			moved := l.moveMain(t, tc.file, "package calc\n\n// someone else's line\n")
			_, err := l.q.Approve(context.Background(), nodetest.ReviewID, "", "alice")
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "stays pending") {
				t.Fatalf("approve: %v, want an error saying %q", err, tc.want)
			}
			if l.main(t) != moved || l.status(t) != nodes.StatusPending {
				t.Fatalf("after a refused approval: main %s (want %s), entry %s", l.main(t), moved, l.status(t))
			}
		})
	}
}

// TestReviewConcurrentApproveMergesOnce: many approvals of one entry at
// once (two reviewers, a double click in the inbox) land it exactly once;
// the others are told it was already approved.
func TestReviewConcurrentApproveMergesOnce(t *testing.T) {
	l := newLanding(t, "merge")
	moved := l.moveMain(t, "README", "calc, documented\n")
	const n = 4
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = l.q.Approve(context.Background(), nodetest.ReviewID, "", "reviewer")
		}()
	}
	wg.Wait()
	ok := 0
	for _, err := range errs {
		switch {
		case err == nil:
			ok++
		case !errors.Is(err, nodes.ErrReviewDecided) || !strings.Contains(err.Error(), "approved by reviewer"):
			t.Errorf("a losing approval: %v, want ErrReviewDecided naming the state", err)
		}
	}
	merges := git(t, l.remote, "rev-list", "--merges", moved+"..main")
	if ok != 1 || len(strings.Fields(merges)) != 1 {
		t.Fatalf("BREACH: %d approvals succeeded and main gained merges %q; want exactly one", ok, merges)
	}
}

// TestReviewDecidedEntryRefused: deciding a decided entry is an error
// naming its state, and changes nothing.
func TestReviewDecidedEntryRefused(t *testing.T) {
	l := newLanding(t, "ff")
	if _, err := l.q.Reject(context.Background(), nodetest.ReviewID, "wrong approach", "carol"); err != nil {
		t.Fatal(err)
	}
	_, err := l.q.Approve(context.Background(), nodetest.ReviewID, "", "alice")
	if !errors.Is(err, nodes.ErrReviewDecided) || !strings.Contains(err.Error(), "rejected by carol") {
		t.Fatalf("approve after reject: %v", err)
	}
	if l.main(t) != l.base || l.status(t) != nodes.StatusRejected {
		t.Fatalf("a refused decision changed something: main %s, entry %s", l.main(t), l.status(t))
	}
}

// TestReviewIDTraversalRefused: an id is a plain directory name in the
// queue. Paths, dot-dot, and symlinks out of the queue are refused, and an
// entry outside the queue is never read or decided.
func TestReviewIDTraversalRefused(t *testing.T) {
	l := newLanding(t, "ff")
	outside := t.TempDir()
	nodetest.WriteEntry(t, outside, "victim", nodes.ReviewEntry{Title: "outside", Status: nodes.StatusPending, Commit: l.commit, Branch: "fix/add",
		OnApprove: &nodes.ApproveAction{MergeInto: "main", Method: "ff", Remote: l.remote}})
	rel, _ := filepath.Rel(l.q.Dir, filepath.Join(outside, "victim"))
	if err := os.Symlink(filepath.Join(outside, "victim"), filepath.Join(l.q.Dir, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(l.q.Dir, "filelink"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "victim", "entry.json"), filepath.Join(l.q.Dir, "filelink", "entry.json")); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{rel, "../" + filepath.Base(outside), "..", ".", "", "a/b", filepath.Join(outside, "victim"), ".lock", "link", "filelink", nodetest.ReviewID + "/..", "x\x00y"} {
		_, gerr := l.q.Get(id)
		_, aerr := l.q.Approve(context.Background(), id, "", "mallory")
		_, rerr := l.q.Reject(context.Background(), id, "", "mallory")
		for _, err := range []error{gerr, aerr, rerr} {
			if !errors.Is(err, nodes.ErrBadReviewID) && !errors.Is(err, nodes.ErrNoReview) {
				t.Errorf("BREACH: id %q: %v, want it refused", id, err)
			}
		}
	}
	if b, _ := os.ReadFile(filepath.Join(outside, "victim", "entry.json")); !strings.Contains(string(b), `"status": "pending"`) || l.main(t) != l.base {
		t.Fatalf("BREACH: the entry outside the queue was decided:\n%s", b)
	}
	if list, err := l.q.List(); err != nil || len(list) != 1 || list[0].ID != nodetest.ReviewID {
		t.Fatalf("list: %+v %v, want only the queue's own entry", list, err)
	}
}
