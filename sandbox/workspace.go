package sandbox

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// Snapshot returns a read-only checkout of repo at rev from the shared
// cache under cacheDir (see LeaseSnapshot), without holding a lease: the
// snapshot may be evicted once the cache is over its cap. Runs use
// LeaseSnapshot.
func Snapshot(ctx context.Context, repo, rev, cacheDir string) (dir, commit string, err error) {
	l, err := LeaseSnapshot(ctx, repo, rev, cacheDir)
	if err != nil {
		return "", "", err
	}
	return l.Dir, l.Commit, l.Release()
}

// LeaseSnapshot returns a read-only checkout of repo at rev, cached per
// commit under cacheDir/snapshots/<commit> and shared by every run and
// every clone of the same commit, and holds a lease on it until Release
// (or until the process ends): eviction never removes a leased snapshot.
//
// The snapshot owns its files. Its .git holds a pack of exactly the
// objects reachable from the commit, written fresh by git pack-objects,
// never hard links into the user's .git: the box hands the snapshot over
// to the commands' uid (lchown), which on a hard link would re-own the
// user's own pack, and a `git gc` in the user's repository would keep an
// old pack alive as long as a snapshot linked it. The history stays
// because promotion pushes from a repository that borrows these objects,
// and a push to an empty remote needs every ancestor of the base.
func LeaseSnapshot(ctx context.Context, repo, rev, cacheDir string) (*SnapshotLease, error) {
	repo, err := filepath.Abs(repo)
	if err != nil {
		return nil, err
	}
	commit, err := gitOut(ctx, repo, "rev-parse", "--verify", "--quiet", rev+"^{commit}")
	if err != nil {
		return nil, fmt.Errorf("resolve %q in %s: %w", rev, repo, err)
	}
	root := filepath.Join(cacheDir, "snapshots")
	if err := os.MkdirAll(root, 0o755); err != nil {
		return nil, err
	}
	l, err := lease(root, commit)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(l.Dir); err == nil {
		return l, nil
	}
	if err := buildSnapshot(ctx, repo, commit, root); err != nil {
		l.Release()
		return nil, err
	}
	// A new snapshot may push the cache over its cap; this one is leased
	// and survives. Eviction failing must not fail the run.
	_, _ = EvictSnapshots(cacheDir, CacheMax())
	return l, nil
}

// snapshotMeta is written beside a snapshot as <commit>.json.
type snapshotMeta struct {
	Repo  string    `json:"repo"`
	Bytes int64     `json:"bytes"`
	Built time.Time `json:"built"`
}

// buildSnapshot writes root/<commit> atomically: a fresh repository with
// its own pack, checked out at commit.
func buildSnapshot(ctx context.Context, repo, commit, root string) error {
	tmp, err := os.MkdirTemp(root, ".tmp-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if _, err := gitOut(ctx, "", "init", "--quiet", "--template=", tmp); err != nil {
		return fmt.Errorf("snapshot %s: %w", repo, err)
	}
	gitDir := filepath.Join(tmp, ".git")
	// A shallow user repository stops history where it does; so must the
	// snapshot, or git would look for parents it never got.
	if p, err := gitOut(ctx, repo, "rev-parse", "--path-format=absolute", "--git-path", "shallow"); err == nil {
		if b, err := os.ReadFile(p); err == nil {
			if err := os.WriteFile(filepath.Join(gitDir, "shallow"), b, 0o644); err != nil {
				return err
			}
		}
	}
	pack := exec.CommandContext(ctx, "git", "pack-objects", "--revs", "--quiet", filepath.Join(gitDir, "objects", "pack", "pack"))
	pack.Dir, pack.Env = repo, gitEnv()
	pack.Stdin = strings.NewReader(commit + "\n")
	var errb bytes.Buffer
	pack.Stdout, pack.Stderr = nil, &errb
	if err := pack.Run(); err != nil {
		return fmt.Errorf("snapshot %s at %s: git pack-objects: %w: %s", repo, commit, err, strings.TrimSpace(errb.String()))
	}
	if _, err := gitOut(ctx, tmp, "-c", "advice.detachedHead=false", "checkout", "--quiet", "--detach", commit); err != nil {
		return fmt.Errorf("snapshot %s at %s: %w", repo, commit, err)
	}
	size, err := diskUsage(tmp)
	if err != nil {
		return err
	}
	dir := filepath.Join(root, commit)
	if err := os.Rename(tmp, dir); err != nil {
		if _, statErr := os.Stat(dir); statErr == nil {
			return nil // another run built it first
		}
		return err
	}
	b, _ := json.Marshal(snapshotMeta{Repo: repo, Bytes: size, Built: time.Now().UTC()})
	return os.WriteFile(filepath.Join(root, commit+".json"), b, 0o644)
}

// gitEnv keeps the system git config out of the harness's git commands.
func gitEnv() []string {
	return append(os.Environ(), "GIT_TERMINAL_PROMPT=0", "GIT_CONFIG_NOSYSTEM=1")
}

// gitOut runs git and returns its trimmed standard output.
func gitOut(ctx context.Context, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	cmd.Env = gitEnv()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(errb.String()))
	}
	return strings.TrimSpace(out.String()), nil
}
