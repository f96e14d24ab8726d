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
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("git %v: %w\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out)), nil
}

// Commit stages everything in dir and commits it as author name with
// message msg.
func Commit(dir, name, msg string) error {
	if _, err := Git(dir, "add", "-A"); err != nil {
		return err
	}
	_, err := Git(dir, "-c", "user.name="+name, "-c", "user.email="+name+"@example.com", "commit", "-q", "-m", msg)
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
	if err := Write(dir, files); err != nil {
		return err
	}
	if _, err := Git(dir, "init", "-q", "-b", "main"); err != nil {
		return err
	}
	return Commit(dir, "dev", msg)
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
