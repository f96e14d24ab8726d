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
)

// A snapshot is a checkout of one commit whose .git borrows the store's
// objects (objects/info/alternates) and holds only HEAD, config and the
// index. Built on a base (a cached snapshot of the same store, the
// nearest one), it is a layer over the base's layers (snaplayer.go):
// only what changed. Past maxLayers, or where overlays cannot be
// mounted, it is flat instead: it hard-links the unchanged files of the
// flat snapshot at the bottom of the base's layers and writes only the
// files that changed. The links are between the cache's own snapshots,
// never into the user's .git, and a snapshot is never written once
// built (boxes see it as a read-only lower layer), so shared inodes
// never change. git checkout replaces a file by unlinking it first; the
// files it replaces are unlinked before it runs all the same.

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
	plan, unlock, err := b.lockedPlan(ctx, tmp, baseCommit)
	if err != nil {
		return err
	}
	defer func() { unlock() }()
	// made are the entries the snapshot does not share with its base:
	// all of them (nil) without one.
	var made []string
	if baseDir != "" {
		dirs, err := linkBase(baseDir, tmp, plan.replaced)
		if err != nil {
			return fmt.Errorf("link the unchanged files from %s: %w", baseDir, err)
		}
		made = append(append([]string{}, dirs...), plan.written...)
	}
	if err := b.checkout(ctx, tmp, tmp, plan); err != nil {
		return err
	}
	unlock()
	unlock = func() {}
	// Handed over to the commands' uid now, so the box's start need not
	// walk the tree: only what the snapshot does not share with a base
	// that was handed over already. The same pass counts its bytes.
	own, err := settle(tmp, made, baseDir == "" || handedOver(baseDir))
	if err != nil {
		return err
	}
	return b.publish(tmp, baseCommit, nil, own)
}

// publish renames the built snapshot tmp into place and records it:
// its meta (lower: the layers it stacks on, none for a flat one) and
// the own bytes it adds to its store's count.
func (b *build) publish(tmp, baseCommit string, lower []string, own int64) error {
	// The meta goes first: whoever finds the directory reads in it
	// whether it is a layer (builds of one commit are serialized, see
	// leaseOrBuild).
	dir, meta := filepath.Join(b.root, b.commit), filepath.Join(b.root, b.commit+".json")
	if err := writeJSON(meta, snapshotMeta{Repo: b.src.repo, Bytes: own,
		Built: time.Now().UTC(), Store: b.st.key, Base: baseCommit, Lower: lower}); err != nil {
		return err
	}
	if err := os.Rename(tmp, dir); err != nil {
		os.Remove(meta)
		return err
	}
	unlockMeta, err := b.st.lockWrite()
	if err != nil {
		return err
	}
	defer unlockMeta()
	return b.st.updateMeta(func(m *storeMeta) { m.CheckoutBytes += own })
}

// errAttributes refuses a base whose .gitattributes differ from the
// commit's (see checkoutPlan.attributes): the snapshot is then built on
// another base or none, so it is the commit's checkout.
var errAttributes = errors.New("the commit changes .gitattributes: its unchanged files would keep the base's conversion")

// lockedPlan takes the store's write lock and plans the checkout into
// dir (see plan), refusing what the cache has no room for and a base
// whose .gitattributes differ (errAttributes); unlock ends
// the lock (the caller's, also on error: it is a no-op then). No import
// may add packs between the verification and the checkout: git would
// read the objects again, and a pack added meanwhile could answer for
// an id with other content.
func (b *build) lockedPlan(ctx context.Context, dir, baseCommit string) (*checkoutPlan, func(), error) {
	unlock, err := b.st.lockWrite()
	if err != nil {
		return nil, nil, err
	}
	plan, err := b.plan(ctx, dir, baseCommit)
	if err == nil && baseCommit != "" && plan.attributes {
		err = errAttributes
	}
	if err == nil {
		if rerr := roomFor(b.st.cache, plan.blobBytes, "the files of "+b.commit); rerr != nil {
			err = refused{rerr}
		}
	}
	if err != nil {
		unlock()
		return nil, nil, err
	}
	return plan, unlock, nil
}

// checkout checks b.commit out into workTree (whose .git is its own, or
// a view of the layer's own .git in dir) while the plan's blobs are
// verified from dir's .git: the snapshot is published (renamed into
// place) only once both are done, so what a corrupt object wrote is
// removed with the rest.
func (b *build) checkout(ctx context.Context, dir, workTree string, plan *checkoutPlan) error {
	verified := make(chan error, 1)
	go func() { verified <- verifyBlobs(ctx, filepath.Join(dir, ".git"), b.format, plan.blobs) }()
	_, cerr := ownGit(ctx, filepath.Join(workTree, ".git"), "", "--work-tree="+workTree, "-c", "advice.detachedHead=false",
		"checkout", "--quiet", "--detach", b.commit)
	if err := <-verified; err != nil {
		return refused{fmt.Errorf("snapshot of %s: %w", b.commit, err)}
	}
	if cerr != nil {
		return fmt.Errorf("check out %s: %w", b.commit, cerr)
	}
	return nil
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
// first import could not reach) until nothing is missing. The caller
// holds the store's write lock.
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
// directories are made anew, and returned), copies its index, and
// removes the files the checkout will replace. The top-level subtrees
// are linked in parallel: link(2) is all the cost, a metadata operation
// per file.
func linkBase(base, dir string, replaced []string) ([]string, error) {
	entries, err := os.ReadDir(base)
	if err != nil {
		return nil, err
	}
	type done struct {
		dirs []string
		err  error
	}
	work, results := make(chan string), make(chan done, len(entries))
	var wg sync.WaitGroup
	for range max(runtime.GOMAXPROCS(0), 2) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for top := range work {
				dirs, err := linkSubtree(base, dir, top)
				results <- done{dirs, err}
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
	close(results)
	var dirs []string
	for r := range results {
		if r.err != nil {
			return nil, r.err
		}
		dirs = append(dirs, r.dirs...)
	}
	if err := copyFile(filepath.Join(base, ".git", "index"), filepath.Join(dir, ".git", "index"), 0o644); err != nil {
		return nil, err
	}
	r, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	for _, p := range replaced {
		if err := r.Remove(filepath.FromSlash(p)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
	}
	return dirs, nil
}

// linkSubtree links base/top into dir/top and returns the directories
// it made (slash paths relative to dir).
func linkSubtree(base, dir, top string) ([]string, error) {
	var dirs []string
	err := filepath.WalkDir(filepath.Join(base, top), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(base, p)
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return os.Link(p, filepath.Join(dir, rel))
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		dirs = append(dirs, filepath.ToSlash(rel))
		return os.Mkdir(filepath.Join(dir, rel), info.Mode().Perm())
	})
	return dirs, err
}

// snapshotEntries calls fn for every entry of the snapshot dir that made
// names (slash paths; nil: the whole tree), then for its .git, then for
// dir itself, last. A made path is looked up below dir through
// directories only: a directory of the base that the commit replaced by
// a symlink leaves paths in made (x/etc below x -> /) that would lead
// out of the snapshot to a host directory, which fn would then re-own.
func snapshotEntries(dir string, made []string, fn func(p string, st *sysStat) error) error {
	visit := func(p string) error {
		var st sysStat
		if err := lstat(p, &st); err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		return fn(p, &st)
	}
	visitMade := func(rel string) error {
		st, err := lstatBeneath(dir, rel)
		if err != nil || st == nil {
			return err // nil: written, then replaced, removed or put below a symlink
		}
		return fn(filepath.Join(dir, filepath.FromSlash(rel)), st)
	}
	// walk visits root and everything below it but dir itself.
	walk := func(root string) error {
		return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || p == dir {
				return err
			}
			return visit(p)
		})
	}
	if made == nil {
		if err := walk(dir); err != nil {
			return err
		}
	} else {
		seen := map[string]bool{}
		for _, m := range made {
			if !seen[m] {
				seen[m] = true
				if err := visitMade(m); err != nil {
					return err
				}
			}
		}
		if err := walk(filepath.Join(dir, ".git")); err != nil {
			return err
		}
	}
	return visit(dir)
}

// settle counts the disk a new snapshot adds to the cache (its
// directories and the files no other snapshot links) and, with
// handOver, hands those entries over to the commands' uid, in one pass
// over what made names (see snapshotEntries).
func settle(dir string, made []string, handOver bool) (int64, error) {
	var n int64
	err := snapshotEntries(dir, made, func(p string, st *sysStat) error {
		if st.Mode&sIFMT == sIFDIR || st.Nlink == 1 {
			n += st.Blocks * 512
		}
		if handOver {
			return handOverEntry(p, st)
		}
		return nil
	})
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
		var st sysStat
		if err := lstat(p, &st); err != nil {
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
	if out, err := ownGit(ctx, b.st.dir, "", "rev-list", "--first-parent", "--max-count=128", b.commit); err == nil {
		for _, c := range strings.Fields(out) {
			if _, ok := cands[c]; ok {
				return c
			}
		}
	}
	return recent
}
