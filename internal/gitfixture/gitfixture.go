// Package gitfixture builds the small git repositories tests and examples
// work on, so each does not write its own git init/add/commit loop.
package gitfixture

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Git runs git in dir and returns its trimmed combined output; the error
// names the arguments and holds the output.
func Git(dir string, args ...string) (string, error) {
	return gitEnv(dir, nil, args...)
}

// gitEnv is Git with env added to the environment.
func gitEnv(dir string, env []string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("git %v: %w\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out)), nil
}

// Commit stages everything in dir and commits it as author name with
// message msg.
func Commit(dir, name, msg string) error {
	return commit(dir, name, msg, nil)
}

// pinnedDate is the author and committer date of the Pinned commits.
var pinnedDate = []string{"GIT_AUTHOR_DATE=2024-01-01T00:00:00Z", "GIT_COMMITTER_DATE=2024-01-01T00:00:00Z"}

// CommitPinned is Commit with the dates pinned: the same tree, parent,
// name and message make the same commit on every call. What a harness
// keeps per commit (a snapshot, a warm build cache) is then made once
// for all the repositories of a test binary that commit the same, not
// once per test (a warm build is a box running go build and go vet).
func CommitPinned(dir, name, msg string) error {
	return commit(dir, name, msg, pinnedDate)
}

func commit(dir, name, msg string, env []string) error {
	if _, err := Git(dir, "add", "-A"); err != nil {
		return err
	}
	_, err := gitEnv(dir, env, "-c", "user.name="+name, "-c", "user.email="+name+"@example.com", "commit", "-q", "-m", msg)
	return err
}

// Write writes files (slash-separated path to content) under dir,
// creating directories on the way.
func Write(dir string, files map[string]string) error {
	for p, c := range files {
		f := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(f, []byte(c), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// Seed makes dir a repository on branch main whose one commit holds files.
func Seed(dir string, files map[string]string, msg string) error {
	return seed(dir, files, msg, nil)
}

// SeedPinned is Seed with the commit's dates pinned (CommitPinned): the
// same files and message make the same commit in every repository.
func SeedPinned(dir string, files map[string]string, msg string) error {
	return seed(dir, files, msg, pinnedDate)
}

func seed(dir string, files map[string]string, msg string, env []string) error {
	if err := Write(dir, files); err != nil {
		return err
	}
	if _, err := Git(dir, "init", "-q", "-b", "main"); err != nil {
		return err
	}
	return commit(dir, "dev", msg, env)
}

// Remote makes dir a bare clone of repo for a test to push to. A
// non-empty hook (a shell script's text) becomes its post-receive hook.
func Remote(repo, dir, hook string) error {
	if _, err := Git(filepath.Dir(dir), "clone", "-q", "--bare", repo, dir); err != nil {
		return err
	}
	if hook == "" {
		return nil
	}
	return os.WriteFile(filepath.Join(dir, "hooks", "post-receive"), []byte(hook), 0o755)
}

// LogUpdates is a post-receive hook that appends each ref update the
// remote takes ("old new ref" lines) to file; more script may follow it.
func LogUpdates(file string) string {
	return "#!/bin/sh\ncat >> " + file + "\n"
}

// Updates counts the updates of branch in a LogUpdates file (how often a
// push moved it) and returns the file's text for a failure to show. A
// file not written yet holds none.
func Updates(file, branch string) (int, string) {
	b, _ := os.ReadFile(file)
	return strings.Count(string(b), "refs/heads/"+branch), string(b)
}
