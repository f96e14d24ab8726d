package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"time"
)

// DefaultCacheMax is the snapshot cache's size cap when SANDGATE_CACHE_MAX
// is unset.
const DefaultCacheMax int64 = 10 << 30

// CacheMax is the snapshot cache's size cap: SANDGATE_CACHE_MAX (a size
// such as 10GiB) or DefaultCacheMax. An unreadable value keeps the
// default rather than evicting everything.
func CacheMax() int64 {
	if n, err := parseSize(os.Getenv("SANDGATE_CACHE_MAX")); err == nil && n > 0 {
		return n
	}
	return DefaultCacheMax
}

// DefaultCacheDir is where runs keep shared snapshots unless told
// otherwise: $XDG_CACHE_HOME/sandgate or ~/.cache/sandgate.
func DefaultCacheDir() string {
	base, err := os.UserCacheDir()
	if err != nil {
		base = os.TempDir()
	}
	return filepath.Join(base, "sandgate")
}

// SnapshotLease keeps a snapshot from eviction: a shared flock on
// snapshots/<commit>.lock, which the kernel drops when the process dies,
// so a crashed run leaves no stale lease behind.
//
// Dir is the snapshot's tree: its own directory, or for a layered
// snapshot its read-only view (see snaplayer.go). A layered snapshot's
// lease also leases the snapshots it stacks on.
type SnapshotLease struct {
	Dir, Commit string
	f           *os.File
	lower       []*SnapshotLease
	layers      []string // its own directory, then its lower layers'
	view        string   // the view Dir names, mounted for this lease
}

// Release ends the lease.
func (l *SnapshotLease) Release() error {
	if l == nil || l.f == nil {
		return nil
	}
	lock := l.f.Name()
	err := l.f.Close()
	l.f = nil
	for _, ll := range l.lower {
		ll.Release()
	}
	l.lower = nil
	if l.view != "" && err == nil {
		err = dropView(lock, l.view)
	}
	return err
}

// dropView unmounts a layered snapshot's view once no lease holds the
// snapshot (its lock is then free): taking the lock exclusively keeps
// a new lease from mounting it meanwhile.
func dropView(lock, view string) error {
	f, err := os.OpenFile(lock, os.O_RDWR, 0)
	if err != nil {
		return removeView(view) // evicted
	}
	defer f.Close()
	if !lockSoon(f) || !stillLinked(f, lock) {
		return nil // leased elsewhere: the view stays
	}
	return removeView(view)
}

// lockSoon takes f's lock exclusively, trying again for up to ~60 ms:
// a child this process forks holds every descriptor open at the fork
// until it execs (Go closes close-on-exec descriptors only then), and
// with it a lease's shared lock its Release just let go of (CI: a box's
// next spare init, forked as the box's command ended, kept a clean
// checkout's view mounted past its run). A lease really held elsewhere
// keeps it longer; its own Release drops the view.
func lockSoon(f *os.File) bool {
	for wait := time.Millisecond; ; wait *= 2 {
		if flock(f, lockEX|lockNB) == nil {
			return true
		}
		if wait > 32*time.Millisecond {
			return false
		}
		time.Sleep(wait)
	}
}

// lease takes a shared lock on root/<commit>.lock and stamps it as used
// now (the LRU clock). An evictor unlinks the lock file while holding it
// exclusively, so a lock won on an unlinked file is retried.
func lease(root, commit string) (*SnapshotLease, error) {
	path := filepath.Join(root, commit+".lock")
	for {
		f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
		if err != nil {
			return nil, err
		}
		if err := flock(f, lockSH); err != nil {
			f.Close()
			return nil, fmt.Errorf("lease snapshot %s: %w", commit, err)
		}
		if !stillLinked(f, path) {
			f.Close()
			continue
		}
		now := time.Now()
		_ = os.Chtimes(path, now, now)
		return &SnapshotLease{Dir: filepath.Join(root, commit), Commit: commit, f: f}, nil
	}
}

// stillLinked reports whether the open file f is the one at path.
func stillLinked(f *os.File, path string) bool {
	a, err1 := f.Stat()
	b, err2 := os.Stat(path)
	return err1 == nil && err2 == nil && os.SameFile(a, b)
}

// SnapshotInfo describes one cached snapshot.
type SnapshotInfo struct {
	Commit   string    `json:"commit"`
	Dir      string    `json:"dir"`
	Repo     string    `json:"repo,omitempty"`
	Bytes    int64     `json:"bytes"`
	LastUsed time.Time `json:"last_used"`
	// InUse: a live run holds a lease on it.
	InUse bool `json:"in_use"`
	// Legacy: an older sandgate's per-repository snapshot directory
	// (snapshots/<repo hash>/<commit>), hard-linked to the repository's
	// pack; never leased, so it is always removable.
	Legacy bool `json:"legacy,omitempty"`
	// Store is the key of the object store the snapshot borrows its
	// objects from (see ListStores); empty for a snapshot holding its
	// own pack. Bytes then counts only what the snapshot adds to the
	// store: its directories and the files it does not share with the
	// snapshot it was built on.
	Store string `json:"store,omitempty"`
	// Lower is how many snapshots a layered snapshot stacks on (0: a
	// flat one). A snapshot a cached layer stacks on is not removed.
	Lower int `json:"lower,omitempty"`
}

var (
	commitName = regexp.MustCompile(`^[0-9a-f]{40}([0-9a-f]{24})?$`)
	legacyName = regexp.MustCompile(`^[0-9a-f]{12}$`)
)

// takeForRemoval locks a cache entry's lock file exclusively, or returns
// nil when a lease holds it or someone else removed it meanwhile.
func takeForRemoval(lock string) (*os.File, error) {
	f, err := os.OpenFile(lock, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if flock(f, lockEX|lockNB) != nil || !stillLinked(f, lock) {
		f.Close()
		return nil, nil
	}
	return f, nil
}

// readCache lists a cache directory; one not made yet is empty.
func readCache(root string) ([]os.DirEntry, error) {
	entries, err := os.ReadDir(root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return entries, err
}

// ListSnapshots lists the cache's snapshots, least recently used first.
func ListSnapshots(cacheDir string) ([]SnapshotInfo, error) {
	root := filepath.Join(cacheDir, "snapshots")
	entries, err := readCache(root)
	if err != nil {
		return nil, err
	}
	var out []SnapshotInfo
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		dir := filepath.Join(root, e.Name())
		switch {
		case commitName.MatchString(e.Name()):
			out = append(out, describe(root, e.Name()))
		case legacyName.MatchString(e.Name()):
			st, err := os.Stat(dir)
			if err != nil {
				continue
			}
			n, _ := diskUsage(dir)
			out = append(out, SnapshotInfo{Dir: dir, Bytes: n, LastUsed: st.ModTime(), Legacy: true})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].LastUsed.Before(out[j].LastUsed) })
	return out, nil
}

func describe(root, commit string) SnapshotInfo {
	s := SnapshotInfo{Commit: commit, Dir: filepath.Join(root, commit)}
	if m, err := readSnapshotMeta(root, commit); err == nil && m.Bytes > 0 {
		s.Repo, s.Bytes, s.Store, s.Lower = m.Repo, m.Bytes, m.Store, len(m.Lower)
	} else {
		s.Bytes, _ = diskUsage(s.Dir)
	}
	lock := filepath.Join(root, commit+".lock")
	if st, err := os.Stat(lock); err == nil {
		s.LastUsed = st.ModTime()
	} else if st, err := os.Stat(s.Dir); err == nil {
		s.LastUsed = st.ModTime()
	}
	if f, err := os.Open(lock); err == nil {
		if flock(f, lockEX|lockNB) != nil {
			s.InUse = true
		}
		f.Close()
	}
	return s
}

// RemoveSnapshot deletes one snapshot unless a live run leases it; it
// reports whether it did. The snapshot's object store goes with its last
// snapshot, unless a build is using it.
func RemoveSnapshot(s SnapshotInfo) (bool, error) {
	ok, _, err := removeSnapshot(s)
	return ok, err
}

// removeSnapshot is RemoveSnapshot that also returns the disk it freed:
// the snapshot's own files (not those another snapshot still links) and
// its store when that went too.
func removeSnapshot(s SnapshotInfo) (bool, int64, error) {
	if s.Legacy {
		return true, s.Bytes, os.RemoveAll(s.Dir)
	}
	root := filepath.Dir(s.Dir)
	lock := filepath.Join(root, s.Commit+".lock")
	f, err := takeForRemoval(lock)
	if f == nil {
		return false, 0, err // leased, or someone else just removed it
	}
	defer f.Close()
	if layerAbove(root, s.Commit) != "" {
		return false, 0, nil // a cached layer stacks on it
	}
	if err := removeView(viewDir(root, s.Commit)); err != nil {
		return false, 0, err
	}
	m, _ := readSnapshotMeta(root, s.Commit)
	// Renamed first, so no reader ever sees a half-deleted snapshot.
	trash, err := os.MkdirTemp(root, ".trash-")
	if err != nil {
		return false, 0, err
	}
	defer os.RemoveAll(trash)
	if err := os.Rename(s.Dir, filepath.Join(trash, "s")); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, 0, err
	}
	freed := s.Bytes
	cacheDir := filepath.Dir(root)
	if m.Store != "" {
		if freed, err = storeRemoved(cacheDir, m.Store, filepath.Join(trash, "s")); err != nil {
			return false, 0, err
		}
	}
	_ = os.Remove(filepath.Join(root, s.Commit+".json"))
	_ = os.Remove(filepath.Join(root, s.Commit+".build"))
	if err := os.Remove(lock); err != nil {
		return true, freed, err
	}
	if m.Store != "" {
		n, err := removeStoreIfUnused(cacheDir, m.Store)
		return true, freed + n, err
	}
	return true, freed, nil
}

// EvictSnapshots removes least recently used snapshots until the cache
// (snapshots and object stores: see CacheBytes) holds at most max bytes,
// skipping leased ones, then object stores no snapshot uses; it returns
// the snapshots it removed, each with the bytes its removal freed.
func EvictSnapshots(cacheDir string, max int64) ([]SnapshotInfo, error) {
	removed, _, err := evict(cacheDir, max)
	return removed, err
}

// evict is EvictSnapshots that also returns the cache's size after it.
func evict(cacheDir string, max int64) ([]SnapshotInfo, int64, error) {
	list, err := ListSnapshots(cacheDir)
	if err != nil {
		return nil, 0, err
	}
	stores, err := listStores(cacheDir, list)
	if err != nil {
		return nil, 0, err
	}
	total := cacheBytes(stores, list)
	// A snapshot a layer stacks on stays until that layer is gone: a
	// later pass takes it once this one removed the layers above it.
	var removed []SnapshotInfo
	for progress := true; progress && total > max; {
		progress = false
		for i, s := range list {
			if total <= max {
				break
			}
			if s.InUse || s.Dir == "" {
				continue
			}
			ok, freed, err := removeSnapshot(s)
			if err != nil {
				return removed, total, err
			}
			if ok {
				s.Bytes = freed
				removed = append(removed, s)
				total -= freed
				list[i].Dir, progress = "", true
			}
		}
	}
	if total > max {
		var freed int64
		freed, err = evictStores(cacheDir, total-max)
		total -= freed
	}
	return removed, total, err
}

// diskUsage is the space the files under dir take on disk.
func diskUsage(dir string) (int64, error) {
	var n int64
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		var st sysStat
		if lstat(p, &st) == nil {
			n += st.Blocks * 512
		}
		return nil
	})
	return n, err
}
