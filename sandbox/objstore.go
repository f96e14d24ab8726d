package sandbox

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// The object store: one bare repository per user repository in the cache
// (stores/<key>, keyed by the repository's real common git directory),
// owned by the harness. Snapshots borrow its objects (alternates) and
// hold only their checkout, so a new commit costs its new objects and its
// changed files, not the history.
//
// The store is filled from the user's repository without running
// anything there: the store's own git reads the user's object
// directories as alternates (GIT_ALTERNATE_OBJECT_DIRECTORIES), which is
// data, never config or hooks. The first import copies the repository's
// pack files (as `git clone --no-hardlinks` does, so the first run costs
// what a local clone costs) and packs only the loose objects reachable
// from the commit, so objects the user dropped but git has not pruned yet
// (a blob added and unstaged) stay out. Later imports pack what the
// commit has that the store's tips do not: O(new objects).
//
// Beside the store: <key>.json (storeMeta), <key>.lock (flock held
// exclusively while the store or its metadata is written) and <key>.use
// (flock held shared by whoever builds from the store, exclusively by
// whoever removes it).

// storeMarker is a file in every store's directory. The box mounts a
// workspace's borrowed objects only from a directory beside one (see
// storeObjects), never from wherever a .git's alternates point.
const storeMarker = "sandgate-store"

// maxTips bounds the commits a store remembers as imported.
const maxTips = 64

// storeMeta is stores/<key>.json.
type storeMeta struct {
	Repo   string `json:"repo"`
	Format string `json:"format"`
	// Tips are commits imported whole, newest last: the next import
	// sends only what they lack.
	Tips []string `json:"tips,omitempty"`
	// CheckoutBytes is the disk the store's snapshots hold, each inode
	// counted once (they share unchanged files through hard links).
	CheckoutBytes int64 `json:"checkout_bytes"`
}

// store is one object store, held for use (its .use lock) until close.
type store struct {
	cache, key, dir string
	use             *os.File
}

func storesRoot(cacheDir string) string { return filepath.Join(cacheDir, "stores") }

// storeKey names the store of a repository's common git directory.
func storeKey(common string) string {
	h := sha256.Sum256([]byte(common))
	return hex.EncodeToString(h[:12])
}

// openStore returns the store key, created if missing, held for use.
func openStore(ctx context.Context, cacheDir, key, repo, format string) (*store, error) {
	root := storesRoot(cacheDir)
	if err := os.MkdirAll(root, 0o755); err != nil {
		return nil, err
	}
	use, err := lockFile(filepath.Join(root, key+".use"), lockSH)
	if err != nil {
		return nil, err
	}
	s := &store{cache: cacheDir, key: key, dir: filepath.Join(root, key), use: use}
	now := time.Now()
	_ = os.Chtimes(use.Name(), now, now) // the store's LRU stamp
	if _, err := os.Stat(filepath.Join(s.dir, storeMarker)); err == nil {
		return s, nil
	}
	unlock, err := s.lockWrite()
	if err != nil {
		s.close()
		return nil, err
	}
	defer unlock()
	if _, err := os.Stat(filepath.Join(s.dir, storeMarker)); err == nil {
		return s, nil // another process created it meanwhile
	}
	if err := s.create(ctx, repo, format); err != nil {
		s.close()
		return nil, fmt.Errorf("create the object store for %s: %w", repo, err)
	}
	return s, nil
}

// create makes the bare repository: no hooks, no template, its own
// config only, files readable by the box's commands whatever the umask.
func (s *store) create(ctx context.Context, repo, format string) error {
	_ = os.RemoveAll(s.dir) // a half-made store from a crash
	tmp, err := os.MkdirTemp(filepath.Dir(s.dir), ".tmp-store-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if _, err := (gitCmd{env: ownGitEnv(""), args: []string{"init", "--quiet", "--bare", "--template=", "--object-format=" + format, tmp}}).run(ctx); err != nil {
		return err
	}
	cfg := "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = true\n\tsharedRepository = 0644\n" +
		"\tfsmonitor = false\n\thooksPath = /dev/null\n[gc]\n\tauto = 0\n[repack]\n\twriteBitmaps = false\n"
	if format != "sha1" {
		cfg = strings.Replace(cfg, "repositoryformatversion = 0", "repositoryformatversion = 1", 1) + "[extensions]\n\tobjectformat = " + format + "\n"
	}
	if err := os.WriteFile(filepath.Join(tmp, "config"), []byte(cfg), 0o644); err != nil {
		return err
	}
	if err := writeJSON(s.metaPath(), storeMeta{Repo: repo, Format: format}); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(tmp, storeMarker), []byte("sandgate object store\n"), 0o444); err != nil {
		return err
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return err
	}
	return os.Rename(tmp, s.dir)
}

func (s *store) objects() string  { return filepath.Join(s.dir, "objects") }
func (s *store) metaPath() string { return filepath.Join(storesRoot(s.cache), s.key+".json") }

// close ends the use of the store.
func (s *store) close() {
	if s != nil && s.use != nil {
		s.use.Close()
		s.use = nil
	}
}

// lockWrite takes the store's write lock.
func (s *store) lockWrite() (func(), error) {
	f, err := lockFile(filepath.Join(storesRoot(s.cache), s.key+".lock"), lockEX)
	if err != nil {
		return nil, err
	}
	return func() { f.Close() }, nil
}

func (s *store) meta() (storeMeta, error) {
	var m storeMeta
	b, err := os.ReadFile(s.metaPath())
	if err != nil {
		return m, err
	}
	return m, json.Unmarshal(b, &m)
}

// updateMeta changes the metadata; the caller holds the write lock.
func (s *store) updateMeta(change func(*storeMeta)) error {
	m, err := s.meta()
	if err != nil {
		return err
	}
	change(&m)
	return writeJSON(s.metaPath(), m)
}

// has reports whether the store itself (no alternates) holds id.
func (s *store) has(ctx context.Context, id string) bool {
	_, err := ownGit(ctx, s.dir, "", "cat-file", "-e", id)
	return err == nil
}

// ensure makes the store hold commit and the history the source has of
// it, importing from src.
func (s *store) ensure(ctx context.Context, src *gitSource, commit string, also ...string) error {
	unlock, err := s.lockWrite()
	if err != nil {
		return err
	}
	defer unlock()
	m, err := s.meta()
	if err != nil {
		return err
	}
	if s.has(ctx, commit) {
		return nil
	}
	if err := s.mergeShallow(src); err != nil {
		return err
	}
	packs, _ := filepath.Glob(filepath.Join(s.objects(), "pack", "pack-*.pack"))
	if len(packs) == 0 {
		if err := s.copyPacks(src); err != nil {
			return err
		}
		if err := s.importLoose(ctx, src, commit); err != nil {
			return err
		}
	}
	if !s.has(ctx, commit) {
		if err := s.importRevs(ctx, src, []string{commit}, append(append([]string(nil), m.Tips...), also...)); err != nil {
			return err
		}
	}
	if !s.has(ctx, commit) {
		return fmt.Errorf("commit %s did not reach the object store from %s", commit, src.repo)
	}
	if err := s.updateMeta(func(m *storeMeta) {
		m.Tips = append(m.Tips, commit)
		if len(m.Tips) > maxTips {
			m.Tips = m.Tips[len(m.Tips)-maxTips:]
		}
	}); err != nil {
		return err
	}
	return s.consolidate(ctx)
}

// importRevs packs what the commits in want have that those in have do
// not (the store's tips: commits it holds whole) into the store.
// Objects the source lacks (a partial clone's unfetched blobs) are left
// out: a snapshot needs its own tree, which is checked before checkout.
func (s *store) importRevs(ctx context.Context, src *gitSource, want, have []string) error {
	var in strings.Builder
	for _, c := range want {
		in.WriteString(c + "\n")
	}
	in.WriteString("--not\n")
	for _, c := range have {
		if s.has(ctx, c) {
			in.WriteString(c + "\n")
		}
	}
	if err := s.pack(ctx, src, in.String(), "--revs"); err != nil {
		return fmt.Errorf("import %s from %s: %w", want[0], src.repo, err)
	}
	return nil
}

// pack runs pack-objects into the store with input in. Its output is
// bounded by the room the cache has (a file-size limit, so a repository
// with huge history fails the import rather than filling the host's
// disk); what a killed pack-objects left is removed.
func (s *store) pack(ctx context.Context, src *gitSource, in string, extra ...string) error {
	room := CacheMax()
	if free, ok := freeBytes(s.dir); ok {
		room = min(room, free)
	}
	args := append(append([]string{"--git-dir=" + s.dir, "pack-objects"}, extra...), "--non-empty", "--missing=allow-any", "--quiet",
		filepath.Join(s.objects(), "pack", "pack"))
	_, err := gitCmd{env: ownGitEnv(src.objects), stdin: strings.NewReader(in), args: args, fileLimit: room}.run(ctx)
	if err != nil {
		tmps, _ := filepath.Glob(filepath.Join(s.objects(), "pack", "tmp_*"))
		for _, t := range tmps {
			_ = os.Remove(t)
		}
		if errors.Is(err, errFileLimit) {
			return fmt.Errorf("%w: the objects to import take more than the %s the snapshot cache has room for (SANDGATE_CACHE_MAX)", err, humanSize(room))
		}
	}
	return err
}

// importObjects packs the named objects from the source into the
// store; the caller holds the write lock.
func (s *store) importObjects(ctx context.Context, src *gitSource, ids []string) error {
	// pack-objects fails on a named object it cannot read: ask only for
	// those the source has.
	out, err := gitCmd{env: ownGitEnv(src.objects), stdin: strings.NewReader(strings.Join(ids, "\n") + "\n"),
		args: []string{"--git-dir=" + s.dir, "cat-file", "--batch-check=%(objectname)"}}.run(ctx)
	if err != nil {
		return err
	}
	var have []string
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) == 1 {
			have = append(have, f[0])
		}
	}
	if len(have) == 0 {
		return nil
	}
	return s.pack(ctx, src, strings.Join(have, "\n")+"\n")
}

// importLoose packs the source's loose commits reachable from commit
// and the objects they add to their packed parents. Loose objects no
// commit reaches (dropped by the user, waiting for git gc) are never
// imported.
func (s *store) importLoose(ctx context.Context, src *gitSource, commit string) error {
	if !hasLoose(src.objects) {
		return nil
	}
	want, have, err := looseCommits(src.objects, commit)
	if err != nil || len(want) == 0 {
		return err
	}
	return s.importRevs(ctx, src, want, have)
}

// hasLoose reports whether an object directory holds any loose object.
func hasLoose(objects string) bool {
	entries, err := os.ReadDir(objects)
	if err != nil {
		return false
	}
	for _, e := range entries {
		if len(e.Name()) != 2 || !e.IsDir() {
			continue
		}
		if f, err := os.Open(filepath.Join(objects, e.Name())); err == nil {
			names, _ := f.Readdirnames(1)
			f.Close()
			if len(names) > 0 {
				return true
			}
		}
	}
	return false
}

// mergeShallow adds the source's shallow commits to the store's: history
// stops where the user's clone stops.
func (s *store) mergeShallow(src *gitSource) error {
	theirs, err := readShallow(src.shallow)
	if err != nil || len(theirs) == 0 {
		return err
	}
	path := filepath.Join(s.dir, "shallow")
	ours, err := readShallow(path)
	if err != nil {
		return err
	}
	set := map[string]bool{}
	for _, c := range append(ours, theirs...) {
		set[c] = true
	}
	if len(set) == len(ours) {
		return nil
	}
	all := make([]string, 0, len(set))
	for c := range set {
		all = append(all, c)
	}
	sort.Strings(all)
	return writeFileAtomic(path, []byte(strings.Join(all, "\n")+"\n"), 0o644)
}

// maxPacks is how many packs a store keeps before consolidating them.
const maxPacks = 24

// consolidate rolls small packs together (geometric repacking: each
// import's small pack joins its neighbours, the big first pack is left
// alone), so object lookups stay fast after hundreds of imports. Readers
// (boxes, promotion) survive it: git looks again for a pack that went.
func (s *store) consolidate(ctx context.Context) error {
	packs, _ := filepath.Glob(filepath.Join(s.objects(), "pack", "pack-*.pack"))
	if len(packs) <= maxPacks {
		return nil
	}
	_, err := ownGit(ctx, s.dir, "", "repack", "--geometric=2", "-d", "-q")
	return err
}

// lockFile opens path and flocks it (how: LOCK_SH or LOCK_EX, optionally
// |LOCK_NB), retrying when a remover unlinked the file in between.
func lockFile(path string, how int) (*os.File, error) {
	for {
		f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
		if err != nil {
			return nil, err
		}
		if err := flock(f, how); err != nil {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		if stillLinked(f, path) {
			return f, nil
		}
		f.Close()
	}
}

// writeJSON writes v to path atomically.
func writeJSON(path string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return writeFileAtomic(path, b, 0o644)
}

// writeFileAtomic writes path through a temporary file and a rename.
func writeFileAtomic(path string, data []byte, perm fs.FileMode) error {
	return replaceFile(path, perm, func(f *os.File) error {
		_, err := f.Write(data)
		return err
	})
}

// replaceFile writes path through a temporary file beside it (filled by
// fill, given mode perm) and a rename: readers see the old file or the
// whole new one.
func replaceFile(path string, perm fs.FileMode, fill func(*os.File) error) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".tmp-"+filepath.Base(path)+"-")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if err := fill(f); err != nil {
		f.Close()
		return err
	}
	if err := f.Chmod(perm); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}
