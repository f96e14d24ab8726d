package gitstore

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/sandgate/sandgate/internal/gitfixture"
	"github.com/sandgate/sandgate/sandbox"
)

// ignoreFixture is a base repository (lower), a copy of it the change is
// made in (merged), the change between them and the promotion repository
// of a run (in runDir) promoting it.
type ignoreFixture struct {
	lower, merged, runDir string
	p                     *Repo
	changes               []sandbox.Change
}

// newIgnoreFixture commits base (force are paths added with git add -f,
// tracked though ignored), copies the checkout and lets change edit the
// copy.
func newIgnoreFixture(t testing.TB, base map[string]string, force []string, change func(dir string)) *ignoreFixture {
	t.Helper()
	f := &ignoreFixture{lower: t.TempDir(), merged: t.TempDir()}
	must := func(_ string, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := gitfixture.Write(f.lower, base); err != nil {
		t.Fatal(err)
	}
	must(gitfixture.Git(f.lower, "init", "-q", "-b", "main"))
	must(gitfixture.Git(f.lower, "-c", "core.excludesFile=/dev/null", "add", "-A"))
	for _, p := range force {
		must(gitfixture.Git(f.lower, "add", "-f", "--", p))
	}
	must(gitfixture.Git(f.lower, "-c", "user.name=dev", "-c", "user.email=dev@example.com", "commit", "-q", "-m", "base"))
	head, err := gitfixture.Git(f.lower, "rev-parse", "HEAD")
	if err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("cp", "-a", f.lower+"/.", f.merged).CombinedOutput(); err != nil {
		t.Fatalf("copy: %v %s", err, out)
	}
	change(f.merged)
	if f.changes, err = sandbox.Changes(f.lower, "", f.merged); err != nil {
		t.Fatal(err)
	}
	// The copy's .git is the same as the base's, so it is no change.
	f.runDir = t.TempDir()
	if f.p, err = Open(filepath.Join(f.runDir, "promote.git"), f.lower, head, CheckPaths); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.p.Close() })
	return f
}

// oracle is the tree `git add -A` writes in the changed copy, with no
// global excludes.
func (f *ignoreFixture) oracle(t testing.TB) string {
	t.Helper()
	if _, err := gitfixture.Git(f.merged, "-c", "core.excludesFile=/dev/null", "add", "-A"); err != nil {
		t.Fatal(err)
	}
	tree, err := gitfixture.Git(f.merged, "write-tree")
	if err != nil {
		t.Fatal(err)
	}
	return tree
}

func write(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	if err := gitfixture.Write(dir, files); err != nil {
		t.Fatal(err)
	}
}

// TestCommitMatchesGitAddAll builds the commit of changes that lean on
// every corner of .gitignore and requires the very tree `git add -A`
// writes for the same work tree, and the ignored list to be exactly the
// new files git left out.
func TestCommitMatchesGitAddAll(t *testing.T) {
	// Anyone's global excludes must not count: this one would drop real.go.
	xdg := t.TempDir()
	write(t, xdg, map[string]string{"git/ignore": "real.go\n*.txt\n"})
	t.Setenv("XDG_CONFIG_HOME", xdg)
	t.Setenv("HOME", xdg)
	base := map[string]string{
		".gitignore":     "gen_*.go\nout.bin\nbuild/\n!build/keep.txt\n*.log\n!important.log\n[!a]x\n/rootonly\n**/cache/**\ntrail.txt  \n\\#hash\nwin.tmp\r\n",
		"sub/.gitignore": "*.tmp\n!keep.tmp\n/anchored\n",
		"tracked.log":    "tracked though ignored\n",
		"gone.log":       "tracked, deleted by the change\n",
		"old/.gitignore": "*.dat\n",
		"main.go":        "package main\n",
	}
	want := []string{"#hash", ":top.log", "build/.gitignore", "build/a.o", "build/keep.txt", "build/sub/again.txt", "bx", "c/cache/x", "edited_1.txt",
		"gen_x.go", "lnk/.gitignore-target/y.o", "nested/deeper/secret.txt", "nested/secret.txt", "out.bin", "rootonly", "sub/a.tmp",
		"sub/anchored", "sub/deep/b.tmp", "trail.txt", "win.tmp", "x.log"}
	f := newIgnoreFixture(t, base, []string{"tracked.log", "gone.log"}, func(dir string) {
		write(t, dir, map[string]string{
			"real.go": "package main\n", "gen_x.go": "package main\n", "out.bin": "\x00\x01",
			"build/a.o": "o", "build/keep.txt": "k", "build/.gitignore": "!*\n", "build/sub/again.txt": "a",
			"x.log": "l", "important.log": "i", ":top.log": "magic-looking name", ":(glob)*": "literal", "-dash": "d",
			"tracked.log": "edited\n", "bx": "b", "ax": "a", "rootonly": "r", "sub/rootonly": "s",
			"c/cache/x": "c", "trail.txt": "t", "#hash": "h", "win.tmp": "w",
			"sub/a.tmp": "t", "sub/keep.tmp": "k", "sub/deep/b.tmp": "t", "sub/anchored": "a", "sub/deep/anchored": "a",
			"nested/.gitignore": "secret.txt\n", "nested/secret.txt": "s", "nested/deeper/secret.txt": "s", "nested/ok.txt": "o",
			// The change edits the root .gitignore: its new rule applies.
			".gitignore": base[".gitignore"] + "edited_*.txt\n", "edited_1.txt": "e",
			// The change deletes old/.gitignore: its rule no longer does.
			"old/x.dat": "d",
			// A .gitignore that is a link is read by neither git nor sandgate.
			"lnk/.gitignore-target/y.o": "y", "lnk/z.o": "z", "exec.sh": "#!/bin/sh\n",
		})
		os.Remove(filepath.Join(dir, "old/.gitignore"))
		os.Remove(filepath.Join(dir, "gone.log"))
		os.Symlink(".gitignore-target/y.o", filepath.Join(dir, "lnk/.gitignore"))
		write(t, dir, map[string]string{"lnk/.gitignore-target/.gitignore": "y.o\n"})
		os.Chmod(filepath.Join(dir, "exec.sh"), 0o755)
	})
	p := f.p
	sig := object.Signature{Name: "t", Email: "t@example.com", When: time.Unix(0, 0).UTC()}
	c, err := p.CommitChange(p.Base(), f.changes, "test\n", sig)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(c.Ignored, want) {
		t.Errorf("ignored:\n got %q\nwant %q", c.Ignored, want)
	}
	oracle := f.oracle(t)
	if c.TreeHash.String() != oracle {
		ours, _ := gitfixture.Git(f.merged, "ls-tree", "-r", "--name-only", c.TreeHash.String())
		theirs, _ := gitfixture.Git(f.merged, "ls-tree", "-r", "--name-only", oracle)
		t.Fatalf("the commit's tree differs from git add -A's:\nours:\n%s\ngit:\n%s", ours, theirs)
	}
	for _, p := range c.Ignored {
		if _, err := gitfixture.Git(f.merged, "cat-file", "-e", oracle+":"+p); err == nil {
			t.Errorf("%s is in git add -A's tree", p)
		}
	}
}

// TestCommitWithoutIgnoreFilesRunsNoMatcher: a change in a repository
// without .gitignore files commits everything and starts no git process
// for matching (the ignored list stays empty).
func TestCommitWithoutIgnoreFiles(t *testing.T) {
	f := newIgnoreFixture(t, map[string]string{"a.go": "package a\n"}, nil, func(dir string) {
		write(t, dir, map[string]string{"out.bin": "x", "b/c.go": "package b\n"})
	})
	p := f.p
	kept, ignored, err := p.Promoted(f.changes)
	if err != nil || len(ignored) != 0 || len(kept) != len(f.changes) {
		t.Fatalf("kept %d of %d, ignored %v (%v)", len(kept), len(f.changes), ignored, err)
	}
	if entries, _ := os.ReadDir(filepath.Join(f.runDir, "promote.git")); slices.ContainsFunc(entries, func(e os.DirEntry) bool {
		return strings.HasPrefix(e.Name(), "ignore-")
	}) {
		t.Fatal("a scratch tree was left behind")
	}
}

// TestCommitReplacedDirectory: a directory the change replaced by a file
// (and a file replaced by a directory) commits as git add -A commits it.
// The file was lost before: the emptied directory was rebuilt after it.
func TestCommitReplacedDirectory(t *testing.T) {
	f := newIgnoreFixture(t, map[string]string{"d/x.go": "package d\n", "f": "file\n"}, nil, func(dir string) {
		os.RemoveAll(filepath.Join(dir, "d"))
		os.Remove(filepath.Join(dir, "f"))
		write(t, dir, map[string]string{"d": "now a file\n", "f/inner.go": "package f\n"})
	})
	sig := object.Signature{Name: "t", Email: "t@example.com", When: time.Unix(0, 0).UTC()}
	c, err := f.p.CommitChange(f.p.Base(), f.changes, "replace\n", sig)
	if err != nil {
		t.Fatal(err)
	}
	if oracle := f.oracle(t); c.TreeHash.String() != oracle {
		ours, _ := gitfixture.Git(f.merged, "ls-tree", "-r", c.TreeHash.String())
		t.Fatalf("the commit's tree is not git add -A's %s:\n%s", oracle, ours)
	}
}
