package gitstore

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/sandgate/sandgate/sandbox"
)

// listing describes a directory tree the way a judge would see it: every
// path but .git, its type, mode bits that matter and content. The same
// script runs on the host and in the box.
const listing = `cd "$1" && find . -path ./.git -prune -o -print | LC_ALL=C sort | while IFS= read -r p; do
  if [ -L "$p" ]; then printf '%s -> %s\n' "$p" "$(readlink "$p")"
  elif [ -d "$p" ]; then printf '%s/\n' "$p"
  elif [ -x "$p" ]; then printf '%s x %s\n' "$p" "$(sha256sum < "$p" | cut -c1-16)"
  else printf '%s %s\n' "$p" "$(sha256sum < "$p" | cut -c1-16)"; fi
done`

func list(t *testing.T, dir string) string {
	t.Helper()
	out, err := exec.Command("sh", "-c", listing, "sh", dir).CombinedOutput()
	if err != nil {
		t.Fatalf("list %s: %v %s", dir, err, out)
	}
	return string(out)
}

// judgedFixture is a change that leans on every kind of difference a tree
// can have from its base: edits, a new directory, deletions of a file and
// of a whole directory, a directory that becomes a file and a file that
// becomes a directory, a link, a mode change, and a file .gitignore keeps
// out of the commit.
func judgedFixture(t *testing.T) (*ignoreFixture, *Commit) {
	t.Helper()
	base := map[string]string{
		".gitignore": "zz_*.go\n", "a.go": "package a\n", "gone.go": "package a\n", "run.sh": "#!/bin/sh\n",
		"olddir/x.go": "package x\n", "olddir/deep/y.go": "package y\n", "becomesfile/z.go": "package z\n",
		"becomesdir": "a file\n", "keep/k.go": "package k\n", "keep/drop.go": "package k\n",
	}
	f := newIgnoreFixture(t, base, nil, func(dir string) {
		write(t, dir, map[string]string{"a.go": "package a // edited\n", "newdir/sub/n.go": "package n\n", "zz_local.go": "package a // ignored\n"})
		for _, p := range []string{"gone.go", "keep/drop.go"} {
			os.Remove(filepath.Join(dir, p))
		}
		os.RemoveAll(filepath.Join(dir, "olddir"))
		os.RemoveAll(filepath.Join(dir, "becomesfile"))
		write(t, dir, map[string]string{"becomesfile": "now a file\n"})
		os.Remove(filepath.Join(dir, "becomesdir"))
		write(t, dir, map[string]string{"becomesdir/inner.go": "package inner\n"})
		os.Symlink("../a.go", filepath.Join(dir, "newdir/link"))
		os.Chmod(filepath.Join(dir, "run.sh"), 0o755)
	})
	sig := object.Signature{Name: "t", Email: "t@example.com", When: time.Unix(0, 0).UTC()}
	c, err := f.p.CommitChange(f.p.Base(), f.changes, "judged\n", sig)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Ignored) != 1 || c.Ignored[0] != "zz_local.go" {
		t.Fatalf("ignored: %v", c.Ignored)
	}
	if oracle := f.oracle(t); c.TreeHash.String() != oracle {
		t.Fatalf("the commit's tree %s is not git add -A's %s", c.TreeHash, oracle)
	}
	return f, c
}

// want is the listing of the committed tree, checked out by git.
func want(t *testing.T, f *ignoreFixture, c *Commit) string {
	t.Helper()
	dir := t.TempDir()
	cmd := exec.Command("sh", "-c", `git -C "$1" archive "$2" | tar -x -C "$3"`, "sh", f.merged, c.TreeHash.String(), dir)
	cmd.Env = append(os.Environ(), "GIT_OBJECT_DIRECTORY="+filepath.Join(f.runDir, "promote.git", "objects"),
		"GIT_ALTERNATE_OBJECT_DIRECTORIES="+filepath.Join(f.lower, ".git", "objects"))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git archive: %v %s", err, out)
	}
	return list(t, dir)
}

// TestApplyTree: a copy of the base made to hold the judged tree holds
// exactly what git checks out of it, the ignored file not at all.
func TestApplyTree(t *testing.T) {
	f, c := judgedFixture(t)
	dir := filepath.Join(t.TempDir(), "copy")
	if out, err := exec.Command("cp", "-a", f.lower, dir).CombinedOutput(); err != nil {
		t.Fatalf("copy: %v %s", err, out)
	}
	if err := f.p.ApplyTree(c.TreeHash, dir); err != nil {
		t.Fatal(err)
	}
	if got, want := list(t, dir), want(t, f, c); got != want {
		t.Fatalf("the copy holds:\n%s\nthe tree holds:\n%s", got, want)
	}
}

// TestWriteLayer: a box whose workspace is the base with the written
// layer over it sees exactly what git checks out of the judged tree.
func TestWriteLayer(t *testing.T) {
	f, c := judgedFixture(t)
	layer := t.TempDir()
	if err := f.p.WriteLayer(c.TreeHash, layer); err != nil {
		t.Fatal(err)
	}
	b, err := sandbox.Start(context.Background(), sandbox.Options{Snapshot: f.lower, Seed: layer, StateDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if b.Upper() == "" {
		t.Fatal("the kernel refused the overlay: the box copied the base and left the layer out")
	}
	res, err := b.Exec(context.Background(), sandbox.Command{Args: []string{"sh", "-c", listing, "sh", sandbox.WorkDir}})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("list in the box: %v %s", err, res.Output)
	}
	if got, want := string(res.Output), want(t, f, c); got != want {
		t.Fatalf("the box sees:\n%s\nthe tree holds:\n%s", got, want)
	}
	// The layer reads the tree's objects, not the changed workspace: the
	// ignored file is nowhere in it.
	if strings.Contains(string(res.Output), "zz_local.go") {
		t.Fatal("the ignored file reached the box")
	}
}
