package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// gitSource is a repository a snapshot's objects come from: the user's, or
// one the harness wrote (a run's promotion repository).
type gitSource struct {
	repo string
	// common is the repository's common git directory (a linked
	// worktree's main .git), symlinks resolved: the object store's key.
	common string
	// objects is its object directory, symlinks resolved. The store's
	// git reads it as an alternate and follows its own alternates (a
	// --shared clone's) as git does; only this directory's packs are
	// ever copied whole.
	objects string
	shallow string // its shallow file, which may not exist
	format  string // object format: sha1 or sha256
}

// inspectSource resolves rev in repo to a commit and finds the
// repository's directories. Nothing in it runs but git rev-parse with
// everything its config could start disabled (see userGitConfig).
func inspectSource(ctx context.Context, repo, rev, cacheDir string) (string, *gitSource, error) {
	if rev == "" || strings.HasPrefix(rev, "-") || strings.ContainsAny(rev, "\x00\n") {
		return "", nil, fmt.Errorf("revision %q: want a commit, branch or tag name", rev)
	}
	abs, err := filepath.Abs(repo)
	if err != nil {
		return "", nil, err
	}
	args := append(append([]string(nil), userGitConfig...), "rev-parse", "--path-format=absolute", "--git-common-dir",
		"--git-path", "objects", "--git-path", "shallow", "--show-object-format", "--verify", "--quiet", rev+"^{commit}")
	out, err := gitCmd{dir: abs, env: baseGitEnv(), args: args}.run(ctx)
	if err != nil {
		return "", nil, fmt.Errorf("resolve %q in %s: %w", rev, abs, err)
	}
	f := strings.Split(out, "\n")
	if len(f) != 5 {
		return "", nil, fmt.Errorf("resolve %q in %s: git rev-parse said %q", rev, abs, out)
	}
	src := &gitSource{repo: abs, shallow: f[2], format: f[3]}
	commit := f[4]
	if !commitName.MatchString(commit) || (src.format != "sha1" && src.format != "sha256") {
		return "", nil, fmt.Errorf("resolve %q in %s: unexpected commit %q (object format %q)", rev, abs, commit, src.format)
	}
	if src.common, err = filepath.EvalSymlinks(f[0]); err != nil {
		return "", nil, err
	}
	objects, err := filepath.EvalSymlinks(f[1])
	if err != nil {
		return "", nil, fmt.Errorf("%s: object directory: %w", abs, err)
	}
	cache, err := realCacheDir(cacheDir)
	if err != nil {
		return "", nil, err
	}
	// A repository whose own git directory is in the cache is the cache
	// itself seen through a symlink: a snapshot or a store is never the
	// user's repository.
	if within(cache, src.common) || within(cache, objects) {
		return "", nil, fmt.Errorf("%s: its git directory %s is inside the snapshot cache %s: refusing to snapshot the cache itself", abs, src.common, cache)
	}
	if strings.ContainsFunc(objects, func(r rune) bool { return r < ' ' || r == 0x7f }) {
		return "", nil, fmt.Errorf("%s: object directory %q has control characters in its path", abs, objects)
	}
	src.objects = objects
	return commit, src, nil
}

// realCacheDir is cacheDir made absolute with symlinks resolved, created
// if missing.
func realCacheDir(cacheDir string) (string, error) {
	if err := os.MkdirAll(cacheDir, 0o755); err != nil {
		return "", err
	}
	return filepath.EvalSymlinks(cacheDir)
}

// within reports whether path is dir or below it (both clean).
func within(dir, path string) bool {
	return path == dir || strings.HasPrefix(path, dir+string(filepath.Separator))
}

// readShallow reads a shallow file's commits (none when it is missing).
func readShallow(path string) ([]string, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []string
	for _, l := range strings.Fields(string(b)) {
		if !commitName.MatchString(l) {
			return nil, fmt.Errorf("%s: not a commit: %q", path, l)
		}
		out = append(out, l)
	}
	return out, nil
}
