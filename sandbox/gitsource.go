package sandbox

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// gitSource is a repository a snapshot's objects come from: the user's, or
// one the harness wrote (a run's promotion repository).
type gitSource struct {
	repo string
	// common is the repository's common git directory (a linked
	// worktree's main .git), symlinks resolved: the object store's key.
	common string
	// objects are its object directory and every alternate it borrows
	// from, symlinks resolved, in the order git reads them.
	objects []string
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
	if src.objects, err = alternateChain(objects); err != nil {
		return "", nil, fmt.Errorf("%s: %w", abs, err)
	}
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

// maxAlternateDepth is how deep git itself follows alternates.
const maxAlternateDepth = 5

// alternateChain lists objects and the object directories it borrows
// from through objects/info/alternates, recursively as git reads them
// (relative entries are relative to the directory naming them; missing
// ones are skipped, as git skips them).
func alternateChain(objects string) ([]string, error) {
	seen := map[string]bool{objects: true}
	out := []string{objects}
	level := []string{objects}
	for depth := 0; depth < maxAlternateDepth && len(level) > 0; depth++ {
		var next []string
		for _, dir := range level {
			alts, err := readAlternates(dir)
			if err != nil {
				return nil, err
			}
			for _, a := range alts {
				real, err := filepath.EvalSymlinks(a)
				if err != nil || seen[real] {
					continue
				}
				if st, err := os.Stat(real); err != nil || !st.IsDir() {
					continue
				}
				seen[real] = true
				out = append(out, real)
				next = append(next, real)
			}
		}
		level = next
	}
	return out, nil
}

// readAlternates reads dir/info/alternates: one directory a line, "#"
// comments, C-quoted when the line starts with a double quote.
func readAlternates(dir string) ([]string, error) {
	b, err := os.ReadFile(filepath.Join(dir, "info", "alternates"))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), "\r")
		if line == "" || line[0] == '#' {
			continue
		}
		if line[0] == '"' {
			unq, err := strconv.Unquote(line)
			if err != nil {
				return nil, fmt.Errorf("%s: bad quoted alternate %q", filepath.Join(dir, "info", "alternates"), line)
			}
			line = unq
		}
		if !filepath.IsAbs(line) {
			line = filepath.Join(dir, line)
		}
		out = append(out, filepath.Clean(line))
	}
	return out, sc.Err()
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
