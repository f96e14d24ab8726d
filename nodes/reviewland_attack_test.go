package nodes_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/sandgate/sandgate/internal/gitfixture"
	"github.com/sandgate/sandgate/nodes"
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
			if _, err := l.q.Approve(context.Background(), reviewID, "", "alice"); err != nil {
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
		d, _ := l.q.Get(reviewID)
		e := d.Entry
		e.Commit = "refs/sandgate/reviewed~0~0~0~0~0~0~0~0~0"
		writeEntry(t, l.q.Dir, reviewID, e)
		_, err := l.q.Approve(context.Background(), reviewID, "", "alice")
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
		d, _ := l.q.Get(reviewID)
		e := d.Entry
		e.OnApprove = &nodes.ApproveAction{MergeInto: "main", Method: "ff", Remote: remote}
		writeEntry(t, l.q.Dir, reviewID, e)
		if _, err := l.q.Approve(context.Background(), reviewID, "", "alice"); err == nil {
			t.Errorf("remote %q: approved", remote)
		}
		if _, err := os.Stat(marker); err == nil {
			t.Fatalf("remote %q ran a command", remote)
		}
	}
}
