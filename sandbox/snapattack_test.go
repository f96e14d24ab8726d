//go:build linux

package sandbox_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/sandgate/sandgate/sandbox"
)

// TestSnapshotDirectoryBecomesASymlink: a commit that replaces a
// directory of its base by a symlink to a host directory: ordinary git
// content, which the user's next commit (any contributor) or a run's
// change (the agent's, snapshotted by clean-checkout CI) can hold. The
// snapshot built on the base must not touch what the symlink points at:
// a root harness hands the snapshot's new entries over to the commands'
// uid, and following the symlink would give the box's uid a host
// directory.
func TestSnapshotDirectoryBecomesASymlink(t *testing.T) {
	files := []string{"x/etc/passwd", "x/etc/ssh/config"}
	for _, derived := range []bool{false, true} {
		t.Run(map[bool]string{false: "next commit", true: "a run's change"}[derived], func(t *testing.T) {
			host := t.TempDir()
			for _, d := range []string{"etc", "etc/ssh"} {
				os.Mkdir(filepath.Join(host, d), 0o755)
			}
			before := map[string][2]uint32{}
			for _, d := range []string{"", "etc", "etc/ssh"} {
				before[d] = owner(t, filepath.Join(host, d))
			}
			repo := makeRepo(t)
			for _, f := range files {
				os.MkdirAll(filepath.Join(repo, filepath.Dir(f)), 0o755)
				os.WriteFile(filepath.Join(repo, f), []byte(f+"\n"), 0o644)
			}
			first := commitAll(t, repo, "a directory")
			cache := cacheDir(t)
			ctx := context.Background()
			base, err := sandbox.LeaseSnapshot(ctx, repo, first, cache)
			if err != nil {
				t.Fatal(err)
			}
			defer base.Release()
			var snap *sandbox.SnapshotLease
			if derived {
				promote, commit := symlinkChange(t, base.Dir, first, "x", host, files)
				snap, err = sandbox.LeaseDerivedSnapshot(ctx, cache, base.Dir, promote, commit)
			} else {
				os.RemoveAll(filepath.Join(repo, "x"))
				os.Symlink(host, filepath.Join(repo, "x"))
				snap, err = sandbox.LeaseSnapshot(ctx, repo, commitAll(t, repo, "now a symlink"), cache)
			}
			if err != nil {
				t.Fatal(err)
			}
			defer snap.Release()
			if target, err := os.Readlink(filepath.Join(snap.Dir, "x")); err != nil || target != host {
				t.Fatalf("x in the snapshot: %q, %v", target, err)
			}
			for d, want := range before {
				if got := owner(t, filepath.Join(host, d)); got != want {
					t.Errorf("BREACH: the snapshot build re-owned the host's %s to %d:%d", filepath.Join(host, d), got[0], got[1])
				}
			}
		})
	}
}

// owner is a path's uid and gid (the path itself, not what it links to).
func owner(t *testing.T, p string) [2]uint32 {
	t.Helper()
	var st syscall.Stat_t
	if err := syscall.Lstat(p, &st); err != nil {
		t.Fatal(err)
	}
	return [2]uint32{st.Uid, st.Gid}
}

// symlinkChange is a promotion repository (see promotionRepo) whose
// commit on base removes files and puts a symlink to target at name.
func symlinkChange(t *testing.T, snap, base, name, target string, remove []string) (promote, commit string) {
	t.Helper()
	promote = filepath.Join(t.TempDir(), "promote.git")
	git(t, "", "init", "-q", "--bare", promote)
	os.WriteFile(filepath.Join(promote, "objects", "info", "alternates"), []byte(filepath.Join(snap, ".git", "objects")+"\n"), 0o644)
	blob := strings.TrimSpace(gitIn(t, promote, target, "hash-object", "-w", "--stdin"))
	idx := []string{"GIT_INDEX_FILE=" + filepath.Join(t.TempDir(), "index")}
	gitEnvIn(t, promote, idx, "", "read-tree", base)
	var gone strings.Builder
	for _, f := range remove {
		gone.WriteString("0 " + strings.Repeat("0", 40) + "\t" + f + "\n")
	}
	gitEnvIn(t, promote, idx, gone.String(), "update-index", "--index-info")
	gitEnvIn(t, promote, idx, "", "update-index", "--add", "--cacheinfo", "120000,"+blob+","+name)
	tree := strings.TrimSpace(gitEnvIn(t, promote, idx, "", "write-tree"))
	commit = strings.TrimSpace(gitIn(t, promote, "link\n", "-c", "user.name=t", "-c", "user.email=t@t", "commit-tree", tree, "-p", base))
	return promote, commit
}
