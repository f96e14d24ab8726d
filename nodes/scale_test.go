package nodes_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sandgate/sandgate/bench/histrepo"
	"github.com/sandgate/sandgate/nodes"
	"github.com/sandgate/sandgate/nodes/internal/nodetest"
	"github.com/sandgate/sandgate/runtime"
)

// promoteOneLine runs diff_cap, git_commit, git_push (to a --shared bare clone
// of the repository) and review after a one-line edit of file.
func promoteOneLine(t *testing.T, repo, file string) *runtime.Summary {
	t.Helper()
	remote := filepath.Join(t.TempDir(), "remote.git")
	nodetest.Run(t, "", "git", "clone", "-q", "--bare", "--shared", repo, remote)
	src := histrepo.StepsBlueprint(file, remote, t.TempDir())
	sum := nodetest.NewHarness(t, repo).Run(t, src, nil)
	if sum.Status != runtime.StatusSucceeded {
		t.Fatalf("run %s: %s", sum.Status, sum.Reason)
	}
	branch := "sandgate/" + filepath.Base(sum.Dir)
	if diff := nodetest.Run(t, remote, "git", "diff", "--stat", "main", branch); !strings.Contains(diff, file+" | 2 +-") {
		t.Fatalf("pushed branch holds another change:\n%s", diff)
	}
	return sum
}

// TestHarnessStepsDoNotReadHistory promotes the same one-line change in two
// repositories with the same tree, one with 5 commits and one with ~100k
// objects of history: every harness step (diff_cap, commit, push, review,
// the end of the run) must read exactly as many objects in both. A step
// that walked the history or scanned the object store would read more in
// the long one.
func TestHarnessStepsDoNotReadHistory(t *testing.T) {
	ctx := context.Background()
	shape := histrepo.Spec{Files: 1000, PerCommit: 4}
	reads := map[string]int64{}
	for _, c := range []struct {
		name    string
		commits int
	}{{"short", 5}, {"long", 8000}} {
		repo := filepath.Join(t.TempDir(), c.name)
		s := shape
		s.Commits = c.commits
		if err := histrepo.Generate(ctx, repo, s); err != nil {
			t.Fatal(err)
		}
		// Same tree in both: the last commit sets every file to one content.
		nodetest.Run(t, repo, "sh", "-c", `for f in $(git ls-files); do printf 'package s\n// revision\n' > "$f"; done && git -c user.name=g -c user.email=g@x commit -qam same`)
		before := nodes.ObjectReads()
		promoteOneLine(t, repo, histrepo.Path(7))
		reads[c.name] = nodes.ObjectReads() - before
		if c.name == "long" {
			n := nodetest.Run(t, repo, "git", "rev-list", "--all", "--objects", "--count")
			t.Logf("long history: %s objects", n)
		}
	}
	t.Logf("objects read: %v", reads)
	if reads["short"] == 0 || reads["long"] != reads["short"] {
		t.Fatalf("objects read by the harness: %d with 5 commits, %d with a long history; want the same, non-zero", reads["short"], reads["long"])
	}
	// The change touches one file three directories deep: its base blob,
	// the commit, and the trees on its path, read by each step.
	if reads["long"] > 30 {
		t.Fatalf("the harness read %d objects for a one-file change", reads["long"])
	}
}

// TestBorrowedObjectRepositories runs the whole promotion on a user's
// repository that does not hold its own objects: a `git clone --shared`
// (objects through alternates) and a linked worktree (a .git file).
func TestBorrowedObjectRepositories(t *testing.T) {
	origin := filepath.Join(t.TempDir(), "origin")
	if err := histrepo.Generate(context.Background(), origin, histrepo.Spec{Files: 20, Commits: 30, PerCommit: 2}); err != nil {
		t.Fatal(err)
	}
	shared := filepath.Join(t.TempDir(), "shared")
	nodetest.Run(t, "", "git", "clone", "-q", "--shared", origin, shared)
	if _, err := os.Stat(filepath.Join(shared, ".git", "objects", "info", "alternates")); err != nil {
		t.Fatalf("the --shared clone borrows no objects: %v", err)
	}
	worktree := filepath.Join(t.TempDir(), "linked")
	nodetest.Run(t, origin, "git", "worktree", "add", "-q", "--detach", worktree, "main")
	if fi, err := os.Lstat(filepath.Join(worktree, ".git")); err != nil || fi.IsDir() {
		t.Fatalf("the linked worktree has no .git file: %v", err)
	}
	for name, repo := range map[string]string{"shared clone": shared, "linked worktree": worktree} {
		t.Run(name, func(t *testing.T) { promoteOneLine(t, repo, histrepo.Path(3)) })
	}
}
