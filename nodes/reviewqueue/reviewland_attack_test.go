package reviewqueue_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/sandgate/sandgate/internal/gitfixture"
	"github.com/sandgate/sandgate/nodes"
	"github.com/sandgate/sandgate/nodes/internal/nodetest"
)

// TestReviewApproveLandsOnlyTheReviewedCommit: after the review, the
// reviewed branch moves (the agent, or anyone with push rights, adds a
// commit). Approving must land exactly the reviewed commit, never the
// branch's new tip, also when the entry names the commit by a revision
// expression that resolves to the branch ("refs/sandgate/reviewed~0…").
func TestReviewApproveLandsOnlyTheReviewedCommit(t *testing.T) {
	for _, method := range []string{"ff", "merge"} {
		t.Run(method, func(t *testing.T) {
			l := newLanding(t, method)
			sneaked := commitFile(t, l.work, "calc.go", "package calc\n\nfunc Add(a, b int) int { return 42 }\n", "after the review")
			git(t, l.work, "push", "-q", l.remote, "fix/add")
			if _, err := l.q.Approve(context.Background(), nodetest.ReviewID, "", "alice"); err != nil {
				t.Fatal(err)
			}
			if isAncestor(t, l.remote, sneaked, "main") || !isAncestor(t, l.remote, l.commit, "main") {
				t.Fatalf("main %s: want the reviewed %s landed and not the later %s", l.main(t), l.commit, sneaked)
			}
		})
	}
	t.Run("revision expression", func(t *testing.T) {
		l := newLanding(t, "ff")
		sneaked := commitFile(t, l.work, "calc.go", "package calc\n\nfunc Add(a, b int) int { return 42 }\n", "after the review")
		git(t, l.work, "push", "-q", l.remote, "fix/add")
		d, _ := l.q.Get(nodetest.ReviewID)
		e := d.Entry
		e.Commit = "refs/sandgate/reviewed~0~0~0~0~0~0~0~0~0"
		nodetest.WriteEntry(t, l.q.Dir, nodetest.ReviewID, e)
		_, err := l.q.Approve(context.Background(), nodetest.ReviewID, "", "alice")
		if l.main(t) == sneaked {
			t.Fatal("an entry naming its commit by a revision landed the branch's new tip")
		}
		if err == nil {
			t.Fatal("an entry whose commit is not an object id was approved")
		}
	})
}

func isAncestor(t *testing.T, dir, a, b string) bool {
	t.Helper()
	_, err := gitfixture.Git(dir, "merge-base", "--is-ancestor", a, b)
	return err == nil
}

// TestReviewApproveRemoteIsNoCommand: an edited entry's remote may name
// git's ext:: transport (a shell command) or an option; approving must run
// neither.
func TestReviewApproveRemoteIsNoCommand(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "pwned")
	for _, remote := range []string{"ext::sh -c touch% " + marker, "--upload-pack=touch " + marker, "-oProxyCommand=touch " + marker} {
		l := newLanding(t, "ff")
		d, _ := l.q.Get(nodetest.ReviewID)
		e := d.Entry
		e.OnApprove = &nodes.ApproveAction{MergeInto: "main", Method: "ff", Remote: remote}
		nodetest.WriteEntry(t, l.q.Dir, nodetest.ReviewID, e)
		if _, err := l.q.Approve(context.Background(), nodetest.ReviewID, "", "alice"); err == nil {
			t.Errorf("remote %q: approved", remote)
		}
		if _, err := os.Stat(marker); err == nil {
			t.Fatalf("remote %q ran a command", remote)
		}
	}
}

// TestReviewApproveGitHubNeedsTheReviewedCommit: merging or approving a
// pull request pins the reviewed commit (sha, commit_id). An entry without
// one (edited, or written so) would let GitHub merge whatever the head is
// now: no request may go out.
func TestReviewApproveGitHubNeedsTheReviewedCommit(t *testing.T) {
	t.Setenv("SANDGATE_TEST_GH_TOKEN", "gh-secret")
	for _, action := range []string{"merge", "approve"} {
		for _, commit := range []string{"", "HEAD", "main~0"} {
			api := nodetest.NewGitHubDouble(t)
			q := &nodes.ReviewQueue{Dir: t.TempDir(), AllowEndpoints: []string{api.URL}}
			nodetest.PREntry(t, q.Dir, api.URL, action, "merge")
			d, _ := q.Get(nodetest.ReviewID)
			d.Entry.Commit = commit
			nodetest.WriteEntry(t, q.Dir, nodetest.ReviewID, d.Entry)
			if _, err := q.Approve(context.Background(), nodetest.ReviewID, "", "alice"); err == nil {
				t.Errorf("%s with commit %q: approved", action, commit)
			}
			if reqs := api.Seen(); len(reqs) != 0 {
				t.Errorf("%s with commit %q: sent %+v", action, commit, reqs)
			}
		}
	}
}
