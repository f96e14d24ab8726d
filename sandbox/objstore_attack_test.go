//go:build linux

package sandbox_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sandgate/sandgate/sandbox"
)

// The user's repository is untrusted: its config, hooks, alternates and
// object files are the attacker's. Snapshotting it must run nothing of
// it, take in nothing it does not reach, and check out only what its
// objects' names vouch for.

// TestHostileRepositoryRunsNothing: hooks, fsmonitor, filter drivers,
// the packing hook and a promisor remote with an ext:: transport (lazy
// fetch of a missing object) in the repository's config; none may run.
func TestHostileRepositoryRunsNothing(t *testing.T) {
	repo := makeRepo(t)
	marker := filepath.Join(t.TempDir(), "pwned")
	evil := filepath.Join(t.TempDir(), "evil.sh")
	os.WriteFile(evil, []byte("#!/bin/sh\necho \"$0 $*\" >> "+marker+"\ncat\n"), 0o755)
	os.WriteFile(filepath.Join(repo, ".gitattributes"), []byte("* filter=evil\n"), 0o644)
	commitAll(t, repo, "attributes")
	hooks := filepath.Join(repo, ".git", "hooks")
	os.MkdirAll(hooks, 0o755)
	for _, h := range []string{"post-checkout", "pre-commit", "reference-transaction", "post-index-change", "fsmonitor-watchman", "pre-auto-gc"} {
		os.Symlink(evil, filepath.Join(hooks, h))
	}
	for _, kv := range [][2]string{
		{"core.hooksPath", hooks}, {"core.fsmonitor", evil}, {"filter.evil.smudge", evil}, {"filter.evil.clean", evil},
		{"filter.evil.process", evil}, {"filter.evil.required", "true"}, {"uploadpack.packObjectsHook", evil},
		{"core.alternateRefsCommand", evil}, {"extensions.partialClone", "origin"}, {"core.repositoryformatversion", "1"},
		{"remote.origin.url", "ext::" + evil}, {"remote.origin.promisor", "true"}, {"protocol.ext.allow", "always"},
		{"remote.origin.uploadpack", evil}, {"core.sshCommand", evil}, {"gc.auto", "1"},
	} {
		git(t, repo, "config", kv[0], kv[1])
	}
	// A blob of the commit is gone: reading it would fetch it lazily from
	// the promisor remote, through the evil transport.
	blob := git(t, repo, "rev-parse", "HEAD:docs/a.txt")
	os.Remove(filepath.Join(repo, ".git", "objects", blob[:2], blob[2:]))
	cache := cacheDir(t)
	_, _, err := sandbox.Snapshot(context.Background(), repo, "HEAD", cache)
	if err == nil || !strings.Contains(err.Error(), "lacks") {
		t.Errorf("snapshot of a commit missing a blob: %v", err)
	}
	// With the blob back, the snapshot works and checks out the blobs as
	// they are: the repository's filter did not run.
	os.WriteFile(filepath.Join(repo, "restore"), []byte("a\n"), 0o644)
	if got := strings.TrimSpace(gitIn(t, repo, "a\n", "-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false", "hash-object", "-w", "--stdin")); got != blob {
		t.Fatalf("restored %s, want %s", got, blob)
	}
	snap, _, err := sandbox.Snapshot(context.Background(), repo, "HEAD", cache)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(snap, "calc.go")); !strings.Contains(string(b), "a - b") {
		t.Errorf("checked out %q", b)
	}
	if b, err := os.ReadFile(marker); err == nil {
		t.Fatalf("BREACH: the repository's config or hooks ran:\n%s", b)
	}
}

// TestHostileRepositoryStaysOutOfTheStore: the store takes in what the
// commit reaches, never what merely lies around the repository: a pack
// that is a symlink to a host file, another repository's objects behind
// its alternates, a blob the user added and dropped.
func TestHostileRepositoryStaysOutOfTheStore(t *testing.T) {
	const secret = "host-secret-4e1d0c"
	private := makeRepo(t)
	os.WriteFile(filepath.Join(private, "key.txt"), []byte(secret+" in another repository\n"), 0o644)
	commitAll(t, private, "private")
	git(t, private, "repack", "-a", "-d", "-q")
	privateBlob := git(t, private, "rev-parse", "HEAD:key.txt")

	repo := packedRepo(t)
	objects := filepath.Join(repo, ".git", "objects")
	os.WriteFile(filepath.Join(objects, "info", "alternates"), []byte(filepath.Join(private, ".git", "objects")+"\n"), 0o644)
	dropped := strings.TrimSpace(gitIn(t, repo, secret+" dropped\n", "hash-object", "-w", "--stdin"))
	// A commit amended away: its blob is loose and only the reflog
	// reaches it.
	os.WriteFile(filepath.Join(repo, "token.txt"), []byte(secret+" amended away\n"), 0o644)
	commitAll(t, repo, "oops")
	amended := git(t, repo, "rev-parse", "HEAD:token.txt")
	git(t, repo, "rm", "-q", "token.txt")
	git(t, repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--amend", "--allow-empty", "-m", "init")
	hostFile := filepath.Join(t.TempDir(), "id_ed25519")
	os.WriteFile(hostFile, []byte(secret+" on the host\n"), 0o600)
	idx, _ := filepath.Glob(filepath.Join(objects, "pack", "pack-*.idx"))
	fake := filepath.Join(objects, "pack", "pack-"+strings.Repeat("e", 40))
	if err := copyBytes(idx[0], fake+".idx"); err != nil {
		t.Fatal(err)
	}
	os.Symlink(hostFile, fake+".pack")
	// Another user's file in the pack directory (as a hard link would put
	// it there) is no part of the repository to copy.
	foreign := filepath.Join(objects, "pack", "pack-"+strings.Repeat("f", 40))
	copyBytes(idx[0], foreign+".idx")
	os.WriteFile(foreign+".pack", []byte(secret+" of another user\n"), 0o644)
	if os.Lchown(foreign+".pack", 12345, 12345) != nil {
		// Not root: no file of another user can be made, and one of
		// this user's own is the repository's to copy.
		os.Remove(foreign + ".pack")
		os.Remove(foreign + ".idx")
	}

	cache := cacheDir(t)
	snap, _, err := sandbox.Snapshot(context.Background(), repo, "HEAD", cache)
	if err != nil {
		t.Fatal(err)
	}
	stores, _ := sandbox.ListStores(cache)
	if len(stores) != 1 {
		t.Fatalf("stores: %+v", stores)
	}
	filepath.WalkDir(cache, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if b, _ := os.ReadFile(p); bytes.Contains(b, []byte(secret)) {
				t.Errorf("BREACH: %s holds the secret", p)
			}
		}
		return nil
	})
	for what, id := range map[string]string{"another repository's blob": privateBlob, "a dropped blob": dropped, "an amended-away blob": amended} {
		if exec.Command("git", "--git-dir="+stores[0].Dir, "cat-file", "-e", id).Run() == nil {
			t.Errorf("BREACH: %s (%s) is in the store", what, id)
		}
	}
	if got := snapGit(t, snap, "log", "--format=%s"); got != "init\ninit" {
		t.Fatalf("snapshot history %q", got)
	}
}

// TestSnapshotRefusesTheCache: a repository that is the cache itself (a
// snapshot, or a .git symlinked into a store) is refused: its snapshot
// would borrow a store it has no business seeing.
func TestSnapshotRefusesTheCache(t *testing.T) {
	cache := cacheDir(t)
	snap, commit, err := sandbox.Snapshot(context.Background(), makeRepo(t), "HEAD", cache)
	if err != nil {
		t.Fatal(err)
	}
	// A root harness hands snapshots over to the commands' uid, and git
	// refuses another uid's repository by itself; without root (or when
	// the harness's own uid owns it) only the cache check stands.
	filepath.WalkDir(snap, func(p string, d fs.DirEntry, err error) error {
		os.Lchown(p, os.Geteuid(), os.Getegid())
		return nil
	})
	stores, _ := sandbox.ListStores(cache)
	linked := t.TempDir()
	os.Symlink(filepath.Join(snap, ".git"), filepath.Join(linked, ".git"))
	for what, repo := range map[string]string{"a snapshot": snap, "a .git symlinked into the cache": linked, "a store": stores[0].Dir} {
		if _, _, err := sandbox.Snapshot(context.Background(), repo, commit, cache); err == nil || !strings.Contains(err.Error(), "inside the snapshot cache") {
			t.Errorf("snapshot of %s: %v", what, err)
		}
	}
}

// TestSnapshotRefusesCorruptObjects: an object whose content does not
// hash to its name (a forged loose object; a lying pack index does the
// same) is refused, so no snapshot, shared by commit with every other
// clone, ever holds content its commit does not name.
func TestSnapshotRefusesCorruptObjects(t *testing.T) {
	repo := makeRepo(t)
	blob := git(t, repo, "rev-parse", "HEAD:calc.go")
	forged := strings.TrimSpace(gitIn(t, repo, "package calc // forged\n", "hash-object", "-w", "--stdin"))
	p := filepath.Join(repo, ".git", "objects", blob[:2], blob[2:])
	os.Chmod(p, 0o644)
	if err := copyBytes(filepath.Join(repo, ".git", "objects", forged[:2], forged[2:]), p); err != nil {
		t.Fatal(err)
	}
	cache := cacheDir(t)
	_, _, err := sandbox.Snapshot(context.Background(), repo, "HEAD", cache)
	if err == nil || !strings.Contains(err.Error(), "corrupt") {
		t.Fatalf("snapshot with a forged blob: %v", err)
	}
	if list, _ := sandbox.ListSnapshots(cache); len(list) != 0 {
		t.Fatalf("BREACH: a snapshot was cached: %+v", list)
	}
}

// TestSnapshotRefusesAHugeTree: a tree whose files exceed the cache's cap
// (here a compression bomb: megabytes of zeros in a tiny pack) is
// refused before anything is written.
func TestSnapshotRefusesAHugeTree(t *testing.T) {
	repo := makeRepo(t)
	os.WriteFile(filepath.Join(repo, "zeros.bin"), make([]byte, 16<<20), 0o644)
	commitAll(t, repo, "bomb")
	git(t, repo, "repack", "-a", "-d", "-q")
	t.Setenv("SANDGATE_CACHE_MAX", "4MiB")
	cache := cacheDir(t)
	_, _, err := sandbox.Snapshot(context.Background(), repo, "HEAD", cache)
	if err == nil || !strings.Contains(err.Error(), "cap") {
		t.Fatalf("snapshot of a 16 MiB tree under a 4 MiB cap: %v", err)
	}
	if list, _ := sandbox.ListSnapshots(cache); len(list) != 0 {
		t.Fatalf("a snapshot was cached: %+v", list)
	}
}

// TestSnapshotRefusesHugeObjects: a repository whose objects exceed the
// cache's cap is refused whether they come as packs to copy or have to
// be packed (loose here): pack-objects is stopped at the cap, and what it
// wrote is removed.
func TestSnapshotRefusesHugeObjects(t *testing.T) {
	for _, packed := range []bool{true, false} {
		t.Run(map[bool]string{true: "packs", false: "loose"}[packed], func(t *testing.T) {
			repo := makeRepo(t)
			noise := make([]byte, 6<<20)
			rand.Read(noise)
			os.WriteFile(filepath.Join(repo, "noise.bin"), noise, 0o644)
			commitAll(t, repo, "noise")
			os.Remove(filepath.Join(repo, "noise.bin"))
			commitAll(t, repo, "no noise")
			if packed {
				git(t, repo, "repack", "-a", "-d", "-q")
			}
			t.Setenv("SANDGATE_CACHE_MAX", "2MiB")
			cache := cacheDir(t)
			_, _, err := sandbox.Snapshot(context.Background(), repo, "HEAD", cache)
			if err == nil || !strings.Contains(err.Error(), "SANDGATE_CACHE_MAX") {
				t.Fatalf("snapshot of a repository with 6 MiB of history under a 2 MiB cap: %v", err)
			}
			stores, _ := sandbox.ListStores(cache)
			for _, s := range stores {
				if s.Bytes > 2<<20 {
					t.Errorf("the store kept %d bytes", s.Bytes)
				}
			}
		})
	}
}

// TestAttackObjectStoreFromTheBox: the box sees the store's objects
// (git works) and can change none of them, nor the snapshot it stands
// on, nor the cached snapshot that one links its files from.
func TestAttackObjectStoreFromTheBox(t *testing.T) {
	for _, noOverlay := range []bool{false, true} {
		t.Run(map[bool]string{false: "overlay", true: "copy"}[noOverlay], func(t *testing.T) {
			repo, first, second := wideRepo(t, 20)
			cache := cacheDir(t)
			base, _, err := sandbox.Snapshot(context.Background(), repo, first, cache)
			if err != nil {
				t.Fatal(err)
			}
			snap, _, err := sandbox.Snapshot(context.Background(), repo, second, cache)
			if err != nil {
				t.Fatal(err)
			}
			stores, _ := sandbox.ListStores(cache)
			hashes := map[string]string{base: treeHash(t, base), snap: treeHash(t, snap), stores[0].Dir: treeHash(t, stores[0].Dir)}
			b, err := sandbox.Start(context.Background(), sandbox.Options{Snapshot: snap, StateDir: t.TempDir(), NoOverlay: noOverlay})
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			res := sh(t, b, "git log --format=%s && git status --porcelain && git show HEAD:d1/f001.txt | head -1")
			if res.ExitCode != 0 || string(res.Output) != "second\nfirst\nfile 1\n" {
				t.Fatalf("git in the box: exit %d\n%s", res.ExitCode, res.Output)
			}
			pack := strings.TrimSpace(string(sh(t, b, "ls .git/objects/pack/*.pack | head -1").Output))
			for what, script := range map[string]string{
				"write a pack":         "echo x > " + pack,
				"add a pack":           "echo x > .git/objects/pack/pack-evil.pack",
				"add a loose object":   "mkdir -p .git/objects/ab && echo x > .git/objects/ab/cdef",
				"chmod a pack":         "chmod 666 " + pack,
				"remount the store rw": "mount -o remount,rw /work/.git/objects",
				"unmount the store":    "umount /work/.git/objects || umount -l /work/.git/objects",
				"repack the store":     "git repack -a -d -q",
				"gc the store":         "git gc -q --prune=now",
				"point .git elsewhere": "echo /tmp > .git/objects/info/alternates",
				"reach the host path":  "ls $(awk '$5==\"/work/.git/objects\"{print $4}' /proc/self/mountinfo)/pack",
			} {
				mustFail(t, b, what, script)
			}
			sh(t, b, "echo pwned > d1/f001.txt; echo pwned > d3/f003.txt; rm -f d2/f002.txt")
			for dir, want := range hashes {
				if treeHash(t, dir) != want {
					t.Errorf("BREACH: the box changed %s", dir)
				}
			}
		})
	}
}

// copyBytes copies a file's content.
func copyBytes(src, dst string) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	return os.WriteFile(dst, b, 0o644)
}
