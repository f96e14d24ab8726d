//go:build linux

package sandbox_test

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/sandgate/sandgate/sandbox"
)

// snapGit runs git in a snapshot, which is handed over to the box's
// commands' uid: git refuses another uid's repository unless told.
func snapGit(t *testing.T, dir string, args ...string) string {
	t.Helper()
	return git(t, dir, append([]string{"-c", "safe.directory=*"}, args...)...)
}

// commitAll commits everything in repo and returns the commit.
func commitAll(t *testing.T, repo, msg string) string {
	t.Helper()
	git(t, repo, "add", "-A")
	git(t, repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", msg)
	return git(t, repo, "rev-parse", "HEAD")
}

// wideRepo is a repository of n files in ten directories, packed, with
// one more commit that changes one file and adds another.
func wideRepo(t *testing.T, n int) (repo, first, second string) {
	t.Helper()
	repo = t.TempDir()
	git(t, repo, "init", "-q", "-b", "main")
	for i := 0; i < n; i++ {
		p := filepath.Join(repo, fmt.Sprintf("d%d", i%10), fmt.Sprintf("f%03d.txt", i))
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(fmt.Sprintf("file %d\n%s", i, strings.Repeat("x", 3000))), 0o644)
	}
	first = commitAll(t, repo, "first")
	git(t, repo, "repack", "-a", "-d", "-q")
	os.WriteFile(filepath.Join(repo, "d3", "f003.txt"), []byte("changed\n"), 0o644)
	os.WriteFile(filepath.Join(repo, "d4", "new.txt"), []byte("new\n"), 0o644)
	os.Remove(filepath.Join(repo, "d5", "f005.txt"))
	second = commitAll(t, repo, "second")
	return repo, first, second
}

func inode(t *testing.T, p string) uint64 {
	t.Helper()
	var st syscall.Stat_t
	if err := syscall.Lstat(p, &st); err != nil {
		t.Fatal(err)
	}
	return st.Ino
}

// TestSnapshotOfANewCommitCostsTheChange: the snapshot of a commit on top
// of a cached one imports only the new objects, links the unchanged files
// from the cached snapshot and writes only the changed ones; the cached
// snapshot is left exactly as it was, and git in the new one sees a clean
// checkout of its commit.
func TestSnapshotOfANewCommitCostsTheChange(t *testing.T) {
	repo, first, second := wideRepo(t, 300)
	cache := cacheDir(t)
	ctx := context.Background()
	a, err := sandbox.LeaseSnapshot(ctx, repo, first, cache)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Release()
	aHash := treeHash(t, a.Dir)
	before, _ := sandbox.CacheBytes(cache)
	b, err := sandbox.LeaseSnapshot(ctx, repo, second, cache)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Release()
	after, _ := sandbox.CacheBytes(cache)
	// 300 files of 3 KB: the first snapshot holds over 1.2 MB of files.
	if grew := after - before; grew > 200<<10 {
		t.Errorf("the snapshot of a one-file change grew the cache by %d bytes", grew)
	}
	if inode(t, filepath.Join(a.Dir, "d1", "f001.txt")) != inode(t, filepath.Join(b.Dir, "d1", "f001.txt")) {
		t.Error("an unchanged file was written again instead of linked")
	}
	if inode(t, filepath.Join(a.Dir, "d3", "f003.txt")) == inode(t, filepath.Join(b.Dir, "d3", "f003.txt")) {
		t.Fatal("a changed file shares the cached snapshot's inode")
	}
	if treeHash(t, a.Dir) != aHash {
		t.Fatal("BREACH: building on a cached snapshot changed it")
	}
	if got, _ := os.ReadFile(filepath.Join(b.Dir, "d3", "f003.txt")); string(got) != "changed\n" {
		t.Fatalf("changed file: %q", got)
	}
	if _, err := os.Stat(filepath.Join(b.Dir, "d5", "f005.txt")); err == nil {
		t.Fatal("a file deleted by the commit is still there")
	}
	if got := snapGit(t, b.Dir, "status", "--porcelain"); got != "" {
		t.Fatalf("git status in the new snapshot: %q", got)
	}
	if got := snapGit(t, b.Dir, "rev-parse", "HEAD"); got != second {
		t.Fatalf("HEAD %s, want %s", got, second)
	}
	if got := snapGit(t, b.Dir, "log", "--format=%s"); got != "second\nfirst" {
		t.Fatalf("history: %q", got)
	}
	stores, err := sandbox.ListStores(cache)
	if err != nil || len(stores) != 1 || stores[0].Snapshots != 2 {
		t.Fatalf("stores %+v (%v), want one with both snapshots", stores, err)
	}
}

// TestObjectStoreOwnsItsObjects: nothing in the store or the snapshot is
// an inode of the user's repository (the first import copies packs, the
// next ones write their own), and the user's repository is untouched.
func TestObjectStoreOwnsItsObjects(t *testing.T) {
	repo, first, second := wideRepo(t, 20)
	userInodes := map[uint64]string{}
	filepath.WalkDir(filepath.Join(repo, ".git"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			userInodes[inode(t, p)] = p
		}
		return nil
	})
	userBefore := treeHash(t, repo)
	cache := cacheDir(t)
	for _, c := range []string{first, second} {
		if _, _, err := sandbox.Snapshot(context.Background(), repo, c, cache); err != nil {
			t.Fatal(err)
		}
	}
	filepath.WalkDir(cache, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if u, shared := userInodes[inode(t, p)]; shared {
				t.Errorf("BREACH: %s is the user's %s", p, u)
			}
		}
		return nil
	})
	if treeHash(t, repo) != userBefore {
		t.Error("BREACH: snapshotting changed the user's repository")
	}
}

// TestSnapshotPartialClone: a blobless clone (--filter=blob:none) is
// snapshotted from what it has: the commit's tree and history, not every
// historical blob. A commit whose blobs the clone never fetched is
// refused with the reason, and a repository borrowing the snapshot's
// objects (as promotion does) can push a new commit to a remote that has
// the base.
func TestSnapshotPartialClone(t *testing.T) {
	origin, first, second := wideRepo(t, 30)
	git(t, origin, "config", "uploadpack.allowFilter", "true")
	partial := filepath.Join(t.TempDir(), "partial")
	git(t, "", "clone", "-q", "--filter=blob:none", "file://"+origin, partial)
	if git(t, partial, "config", "remote.origin.promisor") != "true" {
		t.Fatal("not a partial clone")
	}
	cache := cacheDir(t)
	snap, commit, err := sandbox.Snapshot(context.Background(), partial, "HEAD", cache)
	if err != nil {
		t.Fatalf("snapshot of a partial clone: %v", err)
	}
	if commit != second {
		t.Fatalf("commit %s", commit)
	}
	if got := snapGit(t, snap, "log", "--format=%s"); got != "second\nfirst" {
		t.Fatalf("history: %q", got)
	}
	// The first commit's blobs of d3/f003.txt and d5/f005.txt never came.
	_, _, err = sandbox.Snapshot(context.Background(), partial, first, cache)
	if err == nil || !strings.Contains(err.Error(), "partial clone") {
		t.Fatalf("snapshot of a commit whose blobs are missing: %v", err)
	}
	// Promotion: a bare repository borrowing the snapshot's objects
	// commits a change on top of the base and pushes it.
	promote := filepath.Join(t.TempDir(), "promote.git")
	git(t, "", "init", "-q", "--bare", promote)
	os.WriteFile(filepath.Join(promote, "objects", "info", "alternates"), []byte(filepath.Join(snap, ".git", "objects")+"\n"), 0o644)
	blob := strings.TrimSpace(gitIn(t, promote, "fixed\n", "hash-object", "-w", "--stdin"))
	idx := filepath.Join(t.TempDir(), "index")
	gitEnvIn(t, promote, []string{"GIT_INDEX_FILE=" + idx}, "", "read-tree", second)
	gitEnvIn(t, promote, []string{"GIT_INDEX_FILE=" + idx}, "", "update-index", "--add", "--cacheinfo", "100644,"+blob+",d3/fixed.txt")
	newTree := strings.TrimSpace(gitEnvIn(t, promote, []string{"GIT_INDEX_FILE=" + idx}, "", "write-tree"))
	c := strings.TrimSpace(gitIn(t, promote, "fix\n", "-c", "user.name=t", "-c", "user.email=t@t", "commit-tree", newTree, "-p", second))
	remote := filepath.Join(t.TempDir(), "remote.git")
	git(t, "", "clone", "-q", "--bare", origin, remote)
	git(t, promote, "push", "-q", remote, c+":refs/heads/fix")
	if got := git(t, remote, "rev-parse", "refs/heads/fix"); got != c {
		t.Fatalf("pushed %s, remote has %s", c, got)
	}
	git(t, remote, "fsck", "--no-progress", "--connectivity-only")
}

// TestSnapshotShallowClone: history stops where the shallow clone's does,
// in the snapshot and in the store.
func TestSnapshotShallowClone(t *testing.T) {
	origin, _, second := wideRepo(t, 10)
	for i := 0; i < 3; i++ {
		os.WriteFile(filepath.Join(origin, "more.txt"), []byte(fmt.Sprint(i)), 0o644)
		commitAll(t, origin, fmt.Sprint("more ", i))
	}
	shallow := filepath.Join(t.TempDir(), "shallow")
	git(t, "", "clone", "-q", "--depth", "2", "file://"+origin, shallow)
	cache := cacheDir(t)
	snap, _, err := sandbox.Snapshot(context.Background(), shallow, "HEAD", cache)
	if err != nil {
		t.Fatalf("snapshot of a shallow clone: %v", err)
	}
	if got := snapGit(t, snap, "rev-list", "--count", "HEAD"); got != "2" {
		t.Fatalf("the snapshot's history has %s commits, want the clone's 2", got)
	}
	// Deepening the clone and snapshotting an older commit works too.
	git(t, shallow, "fetch", "-q", "--deepen", "3")
	if _, _, err := sandbox.Snapshot(context.Background(), shallow, second, cache); err != nil {
		t.Fatalf("snapshot after deepening: %v", err)
	}
}

// gitIn runs git with stdin.
func gitIn(t *testing.T, dir, stdin string, args ...string) string {
	t.Helper()
	return gitEnvIn(t, dir, nil, stdin, args...)
}

// gitEnvIn runs git with extra environment and stdin.
func gitEnvIn(t *testing.T, dir string, env []string, stdin string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir, cmd.Env, cmd.Stdin = dir, append(os.Environ(), env...), strings.NewReader(stdin)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git %v: %v", args, err)
	}
	return string(out)
}

// promotionRepo is what a run's promotion repository is: a bare
// repository borrowing a snapshot's objects, with a commit on top of the
// snapshot's (one file changed), written there as loose objects.
func promotionRepo(t *testing.T, snap, base string) (promote, commit string) {
	t.Helper()
	promote = filepath.Join(t.TempDir(), "promote.git")
	git(t, "", "init", "-q", "--bare", promote)
	os.WriteFile(filepath.Join(promote, "objects", "info", "alternates"), []byte(filepath.Join(snap, ".git", "objects")+"\n"), 0o644)
	blob := strings.TrimSpace(gitIn(t, promote, "fixed\n", "hash-object", "-w", "--stdin"))
	idx := []string{"GIT_INDEX_FILE=" + filepath.Join(t.TempDir(), "index")}
	gitEnvIn(t, promote, idx, "", "read-tree", base)
	gitEnvIn(t, promote, idx, "", "update-index", "--add", "--cacheinfo", "100644,"+blob+",d3/f003.txt")
	tree := strings.TrimSpace(gitEnvIn(t, promote, idx, "", "write-tree"))
	commit = strings.TrimSpace(gitIn(t, promote, "fix\n", "-c", "user.name=t", "-c", "user.email=t@t", "commit-tree", tree, "-p", base))
	return promote, commit
}

// TestDerivedSnapshot: clean-checkout CI's snapshot of the commit a run
// made, from the run's promotion repository, goes into the base's store
// and links the base's files: it costs the change.
func TestDerivedSnapshot(t *testing.T) {
	repo, _, second := wideRepo(t, 200)
	cache := cacheDir(t)
	ctx := context.Background()
	base, err := sandbox.LeaseSnapshot(ctx, repo, second, cache)
	if err != nil {
		t.Fatal(err)
	}
	defer base.Release()
	promote, commit := promotionRepo(t, base.Dir, second)
	before, _ := sandbox.CacheBytes(cache)
	d, err := sandbox.LeaseDerivedSnapshot(ctx, cache, base.Dir, promote, commit)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Release()
	after, _ := sandbox.CacheBytes(cache)
	if d.Commit != commit {
		t.Fatalf("snapshot of %s, want %s", d.Commit, commit)
	}
	if grew := after - before; grew > 200<<10 {
		t.Errorf("the derived snapshot grew the cache by %d bytes", grew)
	}
	if got, _ := os.ReadFile(filepath.Join(d.Dir, "d3", "f003.txt")); string(got) != "fixed\n" {
		t.Fatalf("the changed file: %q", got)
	}
	if inode(t, filepath.Join(base.Dir, "d1", "f001.txt")) != inode(t, filepath.Join(d.Dir, "d1", "f001.txt")) {
		t.Error("an unchanged file was written again instead of linked")
	}
	stores, _ := sandbox.ListStores(cache)
	if len(stores) != 1 || stores[0].Snapshots != 2 {
		t.Fatalf("stores %+v, want the base's alone, with both snapshots", stores)
	}
	if got := snapGit(t, d.Dir, "log", "--format=%s", "-2"); got != "fix\nsecond" {
		t.Fatalf("history %q", got)
	}
	// The promotion repository may go (the run ends): the snapshot's
	// objects are in the store.
	os.RemoveAll(promote)
	snapGit(t, d.Dir, "fsck", "--no-progress", "--connectivity-only")
	// A base that is not a snapshot of this cache is refused.
	if _, err := sandbox.LeaseDerivedSnapshot(ctx, cache, repo, promote, commit); err == nil {
		t.Fatal("a derived snapshot on a directory outside the cache")
	}
}

// TestEvictionCoversStores: the cache's size counts each linked file once
// and the stores' objects; a store goes with its last snapshot, and not
// while a run leases one of its snapshots.
func TestEvictionCoversStores(t *testing.T) {
	repo, first, second := wideRepo(t, 100)
	cache := cacheDir(t)
	ctx := context.Background()
	for _, c := range []string{first, second} {
		if _, _, err := sandbox.Snapshot(ctx, repo, c, cache); err != nil {
			t.Fatal(err)
		}
	}
	counted, err := sandbox.CacheBytes(cache)
	if err != nil {
		t.Fatal(err)
	}
	if real := uniqueBytes(t, cache); counted > real || counted < real-64<<10 {
		t.Fatalf("the cache counts %d bytes; its files take %d", counted, real)
	}
	held, err := sandbox.LeaseSnapshot(ctx, repo, second, cache)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sandbox.EvictSnapshots(cache, 0); err != nil {
		t.Fatal(err)
	}
	if stores, _ := sandbox.ListStores(cache); len(stores) != 1 || !stores[0].InUse {
		t.Fatalf("the leased snapshot's store: %+v", stores)
	}
	if got := snapGit(t, held.Dir, "log", "--format=%s"); got != "second\nfirst" {
		t.Fatalf("the leased snapshot after eviction: %q", got)
	}
	held.Release()
	if _, err := sandbox.EvictSnapshots(cache, 0); err != nil {
		t.Fatal(err)
	}
	stores, _ := sandbox.ListStores(cache)
	list, _ := sandbox.ListSnapshots(cache)
	if n, _ := sandbox.CacheBytes(cache); len(stores)+len(list) != 0 || n != 0 {
		t.Fatalf("left %+v and %+v (%d bytes)", stores, list, n)
	}
}

// uniqueBytes is the disk the files under dir take, each inode once,
// leaving out the cache's bookkeeping (locks, metadata).
func uniqueBytes(t *testing.T, dir string) int64 {
	seen := map[uint64]bool{}
	var n int64
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		var st syscall.Stat_t
		if err != nil || syscall.Lstat(p, &st) != nil || seen[st.Ino] || p == dir {
			return nil
		}
		if filepath.Base(p) == "views" && filepath.Dir(p) == dir {
			return filepath.SkipDir
		}
		if base := filepath.Base(p); filepath.Dir(filepath.Dir(p)) == dir && (strings.HasSuffix(base, ".json") || strings.HasSuffix(base, ".lock") || strings.HasSuffix(base, ".use")) {
			return nil
		}
		if filepath.Dir(p) == dir {
			return nil // snapshots/ and stores/ themselves
		}
		seen[st.Ino] = true
		n += st.Blocks * 512
		return nil
	})
	return n
}

// cacheDir is a snapshot cache for one test; the views of its layered
// snapshots are unmounted when the test ends, before it is removed.
func cacheDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	t.Cleanup(func() {
		if err := sandbox.UnmountViews(dir); err != nil {
			t.Error(err)
		}
	})
	return dir
}
