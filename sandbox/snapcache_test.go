//go:build linux

package sandbox_test

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/sandgate/sandgate/sandbox"
)

// packedRepo is makeRepo with its objects in a pack, the file a
// `git clone --local` would hard-link.
func packedRepo(t *testing.T) string {
	t.Helper()
	repo := makeRepo(t)
	git(t, repo, "repack", "-a", "-d", "-q")
	return repo
}

// TestSnapshotSharedAcrossClones: two clones of the same commit share one
// snapshot, whatever their paths.
func TestSnapshotSharedAcrossClones(t *testing.T) {
	repo := packedRepo(t)
	a, b := filepath.Join(t.TempDir(), "a"), filepath.Join(t.TempDir(), "b")
	git(t, "", "clone", "-q", repo, a)
	git(t, "", "clone", "-q", repo, b)
	cache := cacheDir(t)
	la, err := sandbox.LeaseSnapshot(context.Background(), a, "HEAD", cache)
	if err != nil {
		t.Fatal(err)
	}
	defer la.Release()
	lb, err := sandbox.LeaseSnapshot(context.Background(), b, "HEAD", cache)
	if err != nil {
		t.Fatal(err)
	}
	defer lb.Release()
	list, err := sandbox.ListSnapshots(cache)
	if err != nil {
		t.Fatal(err)
	}
	if la.Dir != lb.Dir || len(list) != 1 {
		t.Fatalf("two clones of one commit made %d snapshots (%s, %s)", len(list), la.Dir, lb.Dir)
	}
	if !list[0].InUse || list[0].Bytes <= 0 {
		t.Fatalf("snapshot info %+v", list[0])
	}
}

// TestSnapshotOwnsItsFiles: no file of the snapshot is an inode of the
// user's repository. The attack is the box's hand-over: it lchowns the
// snapshot to the commands' uid, which would re-own the user's pack if
// the snapshot hard-linked it (as `git clone --local` does).
func TestSnapshotOwnsItsFiles(t *testing.T) {
	repo := packedRepo(t)
	owners := map[uint64]uint32{}
	filepath.WalkDir(filepath.Join(repo, ".git"), func(p string, d fs.DirEntry, err error) error {
		var st syscall.Stat_t
		if err == nil && syscall.Lstat(p, &st) == nil {
			owners[st.Ino] = st.Uid
		}
		return nil
	})
	snap, _, err := sandbox.Snapshot(context.Background(), repo, "HEAD", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	filepath.WalkDir(snap, func(p string, d fs.DirEntry, err error) error {
		var st syscall.Stat_t
		if err != nil || syscall.Lstat(p, &st) != nil {
			return err
		}
		if _, shared := owners[st.Ino]; shared {
			t.Errorf("BREACH: %s is an inode of the user's repository", p)
		}
		if d.Type().IsRegular() && st.Nlink != 1 {
			t.Errorf("%s has %d links", p, st.Nlink)
		}
		return nil
	})
	b, err := sandbox.Start(context.Background(), sandbox.Options{Snapshot: snap, StateDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	b.Close()
	filepath.WalkDir(filepath.Join(repo, ".git"), func(p string, d fs.DirEntry, err error) error {
		var st syscall.Stat_t
		if err == nil && syscall.Lstat(p, &st) == nil && st.Uid != owners[st.Ino] {
			t.Errorf("BREACH: the box re-owned the user's %s (uid %d)", p, st.Uid)
		}
		return nil
	})
}

// TestSnapshotEviction: past the cap, least recently used snapshots go
// first and a leased one survives even when it is the oldest.
func TestSnapshotEviction(t *testing.T) {
	repo := makeRepo(t)
	var commits []string
	for _, name := range []string{"one", "two", "three"} {
		os.WriteFile(filepath.Join(repo, name), []byte(name), 0o644)
		git(t, repo, "add", ".")
		git(t, repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", name)
		commits = append(commits, git(t, repo, "rev-parse", "HEAD"))
	}
	cache := cacheDir(t)
	t.Setenv("SANDGATE_CACHE_MAX", "1TiB") // no eviction while building
	for _, c := range commits {
		if _, _, err := sandbox.Snapshot(context.Background(), repo, c, cache); err != nil {
			t.Fatal(err)
		}
	}
	held, err := sandbox.LeaseSnapshot(context.Background(), repo, commits[0], cache)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Release()
	// Use order, oldest first: 0 (leased), 2, 1. Stamps are set, not
	// waited for.
	base := time.Now().Add(-time.Hour)
	for i, c := range []string{commits[0], commits[2], commits[1]} {
		at := base.Add(time.Duration(i) * time.Minute)
		os.Chtimes(filepath.Join(cache, "snapshots", c+".lock"), at, at)
	}
	// Room for all but a little: one snapshot must go, and it is not the
	// leased one. (The cap counts the object store the snapshots borrow
	// from, and a snapshot built on another holds only what changed, so
	// the room is measured rather than counted in snapshots.)
	usage, err := sandbox.CacheBytes(cache)
	if err != nil {
		t.Fatal(err)
	}
	removed, err := sandbox.EvictSnapshots(cache, usage-1)
	if err != nil {
		t.Fatal(err)
	}
	if len(removed) != 1 || removed[0].Commit != commits[2] {
		t.Fatalf("evicted %+v, want only %s (least recently used, not leased)", removed, commits[2])
	}
	if now, _ := sandbox.CacheBytes(cache); removed[0].Bytes <= 0 || now != usage-removed[0].Bytes {
		t.Fatalf("the cache held %d, now %d, and the eviction says it freed %d", usage, now, removed[0].Bytes)
	}
	// No room at all: everything but the leased snapshot goes.
	if _, err := sandbox.EvictSnapshots(cache, 0); err != nil {
		t.Fatal(err)
	}
	list, _ := sandbox.ListSnapshots(cache)
	if len(list) != 1 || list[0].Commit != commits[0] {
		t.Fatalf("left %+v, want the leased %s", list, commits[0])
	}
	if _, err := os.Stat(filepath.Join(held.Dir, "one")); err != nil {
		t.Fatalf("leased snapshot damaged: %v", err)
	}
	// An evicted snapshot is rebuilt on demand.
	again, err := sandbox.LeaseSnapshot(context.Background(), repo, commits[2], cache)
	if err != nil {
		t.Fatal(err)
	}
	defer again.Release()
	if _, err := os.Stat(filepath.Join(again.Dir, "three")); err != nil {
		t.Fatal(err)
	}
}
