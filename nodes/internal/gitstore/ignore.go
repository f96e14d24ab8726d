package gitstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/sandgate/sandgate/nodes/internal/feedback"
	"github.com/sandgate/sandgate/sandbox"
)

// A commit holds the change the way `git add -A` would stage it: a file
// the base commit does not track and that the repository's own .gitignore
// files ignore never leaves the run. A tracked file stays tracked even if
// a pattern matches it, and deletions of tracked files always leave, as
// in git. The rules are those of the tree after the change: the base's
// .gitignore files, as the change edits, adds or deletes them. Only
// in-tree .gitignore files count: never the promotion repository's
// info/exclude, nor anyone's core.excludesFile or
// ~/.config/git/ignore, so the same change commits the same way on any
// machine.
//
// Matching runs `git check-ignore --no-index` on a scratch work tree
// holding only the .gitignore files that can apply (those in the
// directories above each new file), so the semantics are git's own:
// wildmatch classes, escapes, trailing spaces, CRLF, directory patterns,
// negations and "a file in an excluded directory cannot be re-included".
// go-git's gitignore matcher was the alternative: faster (about 10 ms
// against 0.2 s for 10,000 new files, see BenchmarkCommitIgnored, where
// the whole commit takes 1.5 s), but it differs from git on several of
// these (it re-includes "!dir/keep" under an excluded "dir/", has no
// "[!a]" class and keeps a trailing CR), and a commit that leaves out
// or lets through the wrong file is worse than a slower one. A change
// with no .gitignore above its new files starts no process at all.

// Promoted splits a change into what leaves the run and the paths left
// out because git would ignore them (sorted).
func (p *Repo) Promoted(changes []sandbox.Change) ([]sandbox.Change, []string, error) {
	s := &ignoreScan{p: p, ignoreFiles: map[string]ignoreSource{}}
	if _, err := s.walk("", p.baseTree, changeTree(changes)); err != nil {
		return nil, nil, err
	}
	if len(s.fresh) == 0 || len(s.ignoreFiles) == 0 {
		return changes, nil, nil
	}
	ignored, err := s.check(context.Background())
	if err != nil {
		return nil, nil, fmt.Errorf("match .gitignore: %w", err)
	}
	if len(ignored) == 0 {
		return changes, nil, nil
	}
	kept := make([]sandbox.Change, 0, len(changes)-len(ignored))
	var names []string
	for _, c := range changes {
		if ignored[c.Path] {
			names = append(names, c.Path)
		} else {
			kept = append(kept, c)
		}
	}
	sort.Strings(names)
	return kept, names, nil
}

// changeTree groups a change by directory.
func changeTree(changes []sandbox.Change) *dirChange {
	root := &dirChange{files: map[string]*sandbox.Change{}, dirs: map[string]*dirChange{}}
	for i := range changes {
		root.add(strings.Split(changes[i].Path, "/"), &changes[i])
	}
	return root
}

// ignoreSource is one .gitignore as the change leaves it: from the
// change, or a base blob.
type ignoreSource struct {
	change *sandbox.Change
	blob   plumbing.Hash
}

// ignoreScan finds the new files of a change and the .gitignore files
// that can apply to them, reading only the base trees on changed paths.
type ignoreScan struct {
	p *Repo
	// fresh are the paths the base does not track, in change order.
	fresh []string
	// ignoreFiles maps a directory ("" for the root) to its .gitignore.
	ignoreFiles map[string]ignoreSource
}

// walk visits one directory of the change against its base tree and
// reports whether it holds a new file.
func (s *ignoreScan) walk(dir string, tree plumbing.Hash, d *dirChange) (bool, error) {
	base := map[string]object.TreeEntry{}
	if !tree.IsZero() {
		t, err := s.p.objs.tree(tree)
		if err != nil {
			return false, err
		}
		for _, e := range t.Entries {
			base[e.Name] = e
		}
	}
	hasNew := false
	for name, c := range d.files {
		if e, ok := base[name]; c.Deleted || ok && e.Mode != filemode.Dir {
			continue // a deletion, or a path the base tracks
		}
		s.fresh = append(s.fresh, c.Path)
		hasNew = true
	}
	for name, sub := range d.dirs {
		var h plumbing.Hash
		if e, ok := base[name]; ok && e.Mode == filemode.Dir {
			h = e.Hash
		}
		n, err := s.walk(path.Join(dir, name), h, sub)
		if err != nil {
			return false, err
		}
		hasNew = hasNew || n
	}
	if hasNew {
		s.noteIgnoreFile(dir, d, base)
	}
	return hasNew, nil
}

// noteIgnoreFile records dir's .gitignore after the change. Git reads no
// .gitignore that is a symbolic link (it warns and skips it), so neither
// does this: a link in the change is never followed out of the box.
func (s *ignoreScan) noteIgnoreFile(dir string, d *dirChange, base map[string]object.TreeEntry) {
	if c, ok := d.files[".gitignore"]; ok {
		if !c.Deleted && c.Mode.IsRegular() {
			s.ignoreFiles[dir] = ignoreSource{change: c}
		}
		return
	}
	if e, ok := base[".gitignore"]; ok && (e.Mode == filemode.Regular || e.Mode == filemode.Executable) {
		s.ignoreFiles[dir] = ignoreSource{blob: e.Hash}
	}
}

// check lays the .gitignore files into a scratch work tree and asks git
// which new paths they ignore.
func (s *ignoreScan) check(ctx context.Context) (map[string]bool, error) {
	tmp, err := os.MkdirTemp(s.p.dir, "ignore-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	// A git directory of its own: no info/exclude, no config.
	gitDir := filepath.Join(tmp, ".git")
	for _, d := range []string{"objects", "refs"} {
		if err := os.MkdirAll(filepath.Join(gitDir, d), 0o755); err != nil {
			return nil, err
		}
	}
	if err := os.WriteFile(filepath.Join(gitDir, "HEAD"), []byte("ref: refs/heads/main\n"), 0o644); err != nil {
		return nil, err
	}
	for dir, src := range s.ignoreFiles {
		if err := s.layIgnoreFile(tmp, dir, src); err != nil {
			return nil, err
		}
	}
	// In path order git reads each directory's .gitignore once; in map
	// order it would read them again and again.
	sort.Strings(s.fresh)
	return checkIgnore(ctx, gitDir, tmp, s.fresh)
}

// layIgnoreFile writes one .gitignore into the scratch work tree.
func (s *ignoreScan) layIgnoreFile(root, dir string, src ignoreSource) error {
	rel := filepath.FromSlash(path.Join(dir, ".gitignore"))
	if !filepath.IsLocal(rel) {
		return fmt.Errorf("%s: not a path inside the repository", rel)
	}
	dst := filepath.Join(root, rel)
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	if src.change != nil {
		err = CopyContent(f, *src.change)
	} else {
		err = copyBlob(f, s.p.objs.blobOpener(src.blob))
	}
	if err != nil {
		return fmt.Errorf("%s: %w", path.Join(dir, ".gitignore"), err)
	}
	return f.Close()
}

func copyBlob(dst io.Writer, open opener) error {
	r, err := open()
	if err != nil {
		return err
	}
	_, err = io.Copy(dst, r)
	return errors.Join(err, r.Close())
}

// checkIgnore runs git check-ignore on paths in the work tree root. Each
// path goes in as "./path": a path starting with ":" would otherwise be
// read as pathspec magic, and check-ignore refuses GIT_LITERAL_PATHSPECS.
// HOME and XDG_CONFIG_HOME point into the scratch tree and
// core.excludesFile at /dev/null, so no one's global excludes apply.
func checkIgnore(ctx context.Context, gitDir, root string, paths []string) (map[string]bool, error) {
	cmd := exec.CommandContext(ctx, "git", "--git-dir="+gitDir, "--work-tree="+root, "-c", "core.excludesFile=/dev/null",
		"check-ignore", "--no-index", "--stdin", "-z")
	cmd.Dir = root
	cmd.Env = append(gitEnv(), "HOME="+root, "XDG_CONFIG_HOME="+root)
	var in bytes.Buffer
	for _, p := range paths {
		in.WriteString("./" + p + "\x00")
	}
	cmd.Stdin = &in
	var out bytes.Buffer
	var stderr feedback.Capped
	cmd.Stdout, cmd.Stderr = &out, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !(errors.As(err, &ee) && ee.ExitCode() == 1) { // 1: nothing ignored
		return nil, fmt.Errorf("git check-ignore: %w: %s", err, strings.TrimSpace(stderr.String()))
	}
	ignored := map[string]bool{}
	for _, p := range strings.Split(out.String(), "\x00") {
		if p != "" {
			ignored[strings.TrimPrefix(p, "./")] = true
		}
	}
	return ignored, nil
}
