package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Run records live outside the user's work tree, so a run never leaves an
// untracked directory in `git status`:
//
//	$XDG_STATE_HOME/sandgate/<repo-name>-<8 hex of sha256(repo path)>/runs
//	                                                                  /reviews
//
// with ~/.local/state when XDG_STATE_HOME is unset.

// repoRoot returns the absolute top level of the work tree holding dir.
func repoRoot(dir string) (string, error) {
	out, err := git(dir, nil, "rev-parse", "--show-toplevel")
	if err != nil {
		abs, _ := filepath.Abs(dir)
		return "", fmt.Errorf("%s is not a git repository (sandgate works on a commit of a git work tree; use --repo DIR)", abs)
	}
	return out, nil
}

// stateDir is the repository's directory of run records.
func stateDir(root string) string {
	base := os.Getenv("XDG_STATE_HOME")
	if base == "" || !filepath.IsAbs(base) {
		home, err := os.UserHomeDir()
		if err != nil {
			home = os.TempDir()
		}
		base = filepath.Join(home, ".local", "state")
	}
	sum := sha256.Sum256([]byte(root))
	return filepath.Join(base, "sandgate", filepath.Base(root)+"-"+hex.EncodeToString(sum[:4]))
}

// defaultRunsDir is the runs directory of the repository holding dir, or
// .sandgate/runs when dir is not in a repository (an explicit old layout).
func defaultRunsDir(dir string) string {
	root, err := repoRoot(dir)
	if err != nil {
		return filepath.Join(".sandgate", "runs")
	}
	return filepath.Join(stateDir(root), "runs")
}

// git runs git in dir with extra environment and returns trimmed stdout.
func git(dir string, env []string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), "GIT_TERMINAL_PROMPT=0", "GIT_OPTIONAL_LOCKS=0"), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(errb.String())
		if i := strings.IndexByte(msg, '\n'); i >= 0 {
			msg = msg[:i]
		}
		return "", fmt.Errorf("git %s: %s", args[0], orElse(msg, err.Error()))
	}
	return strings.TrimSpace(out.String()), nil
}

func orElse(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// worktree is what the work tree holds beyond HEAD.
type worktree struct {
	head    string
	changed []string // paths differing from HEAD, untracked (not ignored) included
	index   string   // the temporary index holding the work tree, removed by done
}

// readWorktree stages the whole work tree into a temporary copy of the
// user's index (GIT_INDEX_FILE) to list what differs from HEAD. The user's
// index and work tree are never written: only new objects enter the object
// database.
func readWorktree(root string) (*worktree, error) {
	head, err := git(root, nil, "rev-parse", "--verify", "--quiet", "HEAD^{commit}")
	if err != nil {
		return nil, fmt.Errorf("%s has no commit yet: commit something first (sandgate works on a commit)", root)
	}
	idxPath, err := git(root, nil, "rev-parse", "--path-format=absolute", "--git-path", "index")
	if err != nil {
		return nil, err
	}
	tmp, err := os.CreateTemp("", "sandgate-index-")
	if err != nil {
		return nil, err
	}
	w := &worktree{head: head, index: tmp.Name()}
	if src, err := os.Open(idxPath); err == nil {
		_, err = io.Copy(tmp, src) // the copy keeps git's stat cache: only edited files are hashed
		src.Close()
		if err != nil {
			tmp.Close()
			w.done()
			return nil, err
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		tmp.Close()
		w.done()
		return nil, err
	}
	tmp.Close()
	env := []string{"GIT_INDEX_FILE=" + w.index}
	if _, err := git(root, env, "add", "-A", "--", "."); err != nil {
		w.done()
		return nil, err
	}
	out, err := git(root, env, "diff", "--cached", "--name-only", "--no-renames", "HEAD")
	if err != nil {
		w.done()
		return nil, err
	}
	if out != "" {
		w.changed = strings.Split(out, "\n")
	}
	return w, nil
}

// commit records the staged work tree as a commit object whose parent is
// HEAD; no ref points at it. The run works on it as it would on HEAD.
func (w *worktree) commit(root string) (string, error) {
	env := []string{"GIT_INDEX_FILE=" + w.index,
		"GIT_AUTHOR_NAME=sandgate", "GIT_AUTHOR_EMAIL=sandgate@localhost",
		"GIT_COMMITTER_NAME=sandgate", "GIT_COMMITTER_EMAIL=sandgate@localhost"}
	tree, err := git(root, env, "write-tree")
	if err != nil {
		return "", err
	}
	return git(root, env, "commit-tree", tree, "-p", w.head, "-m", "sandgate: uncommitted changes of the work tree")
}

func (w *worktree) done() {
	_ = os.Remove(w.index)
	_ = os.Remove(w.index + ".lock")
}

// chooseRev decides which commit the run works on: HEAD when the work tree
// is clean or --head is given, a snapshot of the work tree with
// --include-uncommitted, and an error otherwise.
func chooseRev(root string, includeUncommitted, head bool, note io.Writer) (string, error) {
	w, err := readWorktree(root)
	if err != nil {
		return "", err
	}
	defer w.done()
	n := len(w.changed)
	switch {
	case n == 0:
		return w.head, nil
	case head:
		fmt.Fprintf(note, "note: %d file(s) differ from HEAD; running on HEAD %.12s without them (--head)\n", n, w.head)
		return w.head, nil
	case includeUncommitted:
		rev, err := w.commit(root)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(note, "note: %d file(s) differ from HEAD; running on a snapshot of the work tree (%.12s, parent HEAD %.12s)\n", n, rev, w.head)
		return rev, nil
	}
	return "", fmt.Errorf("%d file(s) differ from HEAD (e.g. %s): commit them, or pass --include-uncommitted to run on the work tree as it is, or --head to run on HEAD without them", n, w.changed[0])
}
