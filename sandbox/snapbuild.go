package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// A snapshot is a checkout of one commit whose .git borrows the store's
// objects (objects/info/alternates) and holds only HEAD, config and the
// index. Built on a base (a cached snapshot of the same store, the
// nearest one), it hard-links the base's unchanged files and writes only
// the files that changed: its time and disk follow the change. The links
// are between the cache's own snapshots, never into the user's .git, and
// a snapshot is never written once built (boxes see it as a read-only
// lower layer), so shared inodes never change. git checkout replaces a
// file by unlinking it first; the files it replaces are unlinked before
// it runs all the same.

// snapshotGitConfig is a snapshot's .git/config. checkStat=minimal: the
// index copied from the base matches the linked files by mtime and size
// (linking and the hand-over to the commands' uid change their ctime and
// owner), so git status in the box does not rehash the tree.
const snapshotGitConfig = "[core]\n\trepositoryformatversion = %d\n\tfilemode = true\n\tbare = false\n\tlogallrefupdates = false\n" +
	"\tcheckStat = minimal\n\ttrustctime = false\n\tfsmonitor = false\n\thooksPath = /dev/null\n\tuntrackedCache = false\n[gc]\n\tauto = 0\n%s"

// build is one snapshot being built from a store.
type build struct {
	st     *store
	src    *gitSource // where missing objects come from
	format string
	commit string
	root   string // the cache's snapshots directory
}

// run builds root/<commit>, on baseDir (a leased snapshot of baseCommit)
// when set, and adds what it takes on disk to the store's count.
func (b *build) run(ctx context.Context, baseDir, baseCommit string) error {
	tmp, err := os.MkdirTemp(b.root, ".tmp-")
	if err != nil {
		return err
	}
	defer removeTree(tmp)
	head := baseCommit
	if head == "" {
		head = "ref: refs/heads/sandgate"
	}
	if err := b.writeGitDir(tmp, head); err != nil {
		return err
	}
	plan, err := b.plan(ctx, tmp, baseCommit)
	if err != nil {
		return err
	}
	if err := roomFor(b.st.cache, plan.blobBytes, "the files of "+b.commit); err != nil {
		return refused{err}
	}
	if baseDir != "" {
		if err := linkBase(baseDir, tmp, plan.replaced); err != nil {
			return fmt.Errorf("link the unchanged files from %s: %w", baseDir, err)
		}
	}
	if _, err := ownGit(ctx, filepath.Join(tmp, ".git"), nil, "--work-tree="+tmp, "-c", "advice.detachedHead=false",
		"checkout", "--quiet", "--detach", b.commit); err != nil {
		return fmt.Errorf("check out %s: %w", b.commit, err)
	}
	own, err := ownBytes(tmp, baseDir != "", plan.written)
	if err != nil {
		return err
	}
	dir := filepath.Join(b.root, b.commit)
	if err := os.Rename(tmp, dir); err != nil {
		if _, statErr := os.Stat(dir); statErr == nil {
			return nil // another run built it first
		}
		return err
	}
	if err := writeJSON(filepath.Join(b.root, b.commit+".json"), snapshotMeta{Repo: b.src.repo, Bytes: own,
		Built: time.Now().UTC(), Store: b.st.key, Base: baseCommit}); err != nil {
		return err
	}
	unlock, err := b.st.lockWrite()
	if err != nil {
		return err
	}
	defer unlock()
	return b.st.updateMeta(func(m *storeMeta) { m.CheckoutBytes += own })
}

// writeGitDir writes the snapshot's .git: HEAD, config, the store as its
// alternate, the store's shallow commits.
func (b *build) writeGitDir(dir, head string) error {
	g := filepath.Join(dir, ".git")
	for _, d := range []string{filepath.Join(g, "objects", "info"), filepath.Join(g, "refs")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	version, ext := 0, ""
	if b.format != "sha1" {
		version, ext = 1, "[extensions]\n\tobjectformat = "+b.format+"\n"
	}
	files := map[string]string{
		"HEAD":                    head + "\n",
		"config":                  fmt.Sprintf(snapshotGitConfig, version, ext),
		"objects/info/alternates": b.st.objects() + "\n",
	}
	if sh, err := os.ReadFile(filepath.Join(b.st.dir, "shallow")); err == nil {
		files["shallow"] = string(sh)
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(g, filepath.FromSlash(name)), []byte(content), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// plan verifies what the checkout writes, importing from the source what
// the store lacks (a tree or blob of a partial clone's history that the
// first import could not reach) until nothing is missing.
func (b *build) plan(ctx context.Context, dir, baseCommit string) (*checkoutPlan, error) {
	var before []string
	for {
		p, err := planCheckout(ctx, filepath.Join(dir, ".git"), b.format, b.commit, baseCommit)
		if err != nil {
			return nil, fmt.Errorf("snapshot of %s: %w", b.commit, err)
		}
		if p.corrupt != nil {
			return nil, refused{fmt.Errorf("snapshot of %s: %w", b.commit, p.corrupt)}
		}
		if len(p.missing) == 0 {
			return p, nil
		}
		if slices.Equal(p.missing, before) {
			return nil, refused{fmt.Errorf("%s lacks %d objects that %s checks out (%s, …): a partial clone that never fetched them? Check the commit out there once (git checkout %s) and run again",
				b.src.repo, len(p.missing), b.commit, p.missing[0], b.commit)}
		}
		before = p.missing
		if err := b.st.importObjects(ctx, b.src, p.missing); err != nil {
			return nil, err
		}
	}
}

// linkBase hard-links the base snapshot's files into dir (its
// directories are made anew), copies its index, and removes the files
// the checkout will replace. The top-level subtrees are linked in
// parallel: link(2) is all the cost, and a tree of thousands of files
// takes a metadata operation each.
func linkBase(base, dir string, replaced []string) error {
	entries, err := os.ReadDir(base)
	if err != nil {
		return err
	}
	work := make(chan string)
	errs := make(chan error, len(entries))
	var wg sync.WaitGroup
	for range max(runtime.GOMAXPROCS(0), 2) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for top := range work {
				errs <- linkSubtree(base, dir, top)
			}
		}()
	}
	for _, e := range entries {
		if e.Name() != ".git" {
			work <- e.Name()
		}
	}
	close(work)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			return err
		}
	}
	if err := copyFile(filepath.Join(base, ".git", "index"), filepath.Join(dir, ".git", "index"), 0o644); err != nil {
		return err
	}
	r, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer r.Close()
	for _, p := range replaced {
		if err := r.Remove(filepath.FromSlash(p)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}

// linkSubtree links base/top into dir/top.
func linkSubtree(base, dir, top string) error {
	return filepath.WalkDir(filepath.Join(base, top), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(base, p)
		if err != nil {
			return err
		}
		if d.IsDir() {
			info, err := d.Info()
			if err != nil {
				return err
			}
			return os.Mkdir(filepath.Join(dir, rel), info.Mode().Perm())
		}
		return os.Link(p, filepath.Join(dir, rel))
	})
}

// ownBytes is the disk a new snapshot adds to the cache: its
// directories and the files no other snapshot links. A snapshot built on
// a base links every file but those its checkout wrote (and the .git),
// so only its directories and those are looked at.
func ownBytes(dir string, onBase bool, written []string) (int64, error) {
	var n int64
	add := func(p string, isDir bool) {
		var st unix.Stat_t
		if unix.Lstat(p, &st) == nil && (isDir || st.Nlink == 1) {
			n += st.Blocks * 512
		}
	}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || !onBase || strings.HasPrefix(p, filepath.Join(dir, ".git")+string(filepath.Separator)) {
			add(p, d.IsDir())
		}
		return nil
	})
	if onBase {
		for _, w := range written {
			if st, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(w))); err == nil && !st.IsDir() {
				add(filepath.Join(dir, filepath.FromSlash(w)), false)
			}
		}
	}
	return n, err
}

// removeTree removes dir and returns the disk that freed: directories,
// and files whose last link it removed (a file another snapshot still
// links frees nothing).
func removeTree(dir string) (int64, error) {
	var n int64
	var dirs []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		var st unix.Stat_t
		if err := unix.Lstat(p, &st); err != nil {
			return nil
		}
		if d.IsDir() {
			dirs = append(dirs, p)
			n += st.Blocks * 512
			return nil
		}
		if st.Nlink == 1 {
			n += st.Blocks * 512
		}
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return nil
	})
	for i := len(dirs) - 1; i >= 0; i-- {
		if rerr := os.Remove(dirs[i]); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) && err == nil {
			err = rerr
		}
	}
	return n, err
}

// pickBase chooses the snapshot a new one of commit is built on: a
// cached snapshot of the same store, the nearest on commit's first-parent
// line, else the most recently used; "" when the store has none.
func (b *build) pickBase(ctx context.Context) string {
	entries, err := os.ReadDir(b.root)
	if err != nil {
		return ""
	}
	cands := map[string]time.Time{}
	var recent string
	for _, e := range entries {
		c, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok || !commitName.MatchString(c) || c == b.commit {
			continue
		}
		m, err := readSnapshotMeta(b.root, c)
		if err != nil || m.Store != b.st.key {
			continue
		}
		if _, err := os.Stat(filepath.Join(b.root, c, ".git", "index")); err != nil {
			continue
		}
		s := describe(b.root, c)
		cands[c] = s.LastUsed
		if recent == "" || s.LastUsed.After(cands[recent]) {
			recent = c
		}
	}
	if len(cands) == 0 {
		return ""
	}
	if out, err := ownGit(ctx, b.st.dir, nil, "rev-list", "--first-parent", "--max-count=128", b.commit); err == nil {
		for _, c := range strings.Fields(out) {
			if _, ok := cands[c]; ok {
				return c
			}
		}
	}
	return recent
}
