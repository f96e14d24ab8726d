package sandbox

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// StoreInfo describes one object store in the cache (see LeaseSnapshot).
type StoreInfo struct {
	Key string `json:"key"`
	Dir string `json:"dir"`
	// Repo is the common git directory of the repository it mirrors.
	Repo string `json:"repo"`
	// Bytes is its objects plus its snapshots' checkouts (each file
	// counted once, however many snapshots link it).
	Bytes int64 `json:"bytes"`
	// Snapshots is how many cached snapshots borrow its objects.
	Snapshots int `json:"snapshots"`
	// LastUsed is the latest use of the store or of one of its snapshots.
	LastUsed time.Time `json:"last_used"`
	// InUse: a build is using it, or a live run leases one of its
	// snapshots.
	InUse bool `json:"in_use"`
}

// ListStores lists the cache's object stores, least recently used first.
func ListStores(cacheDir string) ([]StoreInfo, error) {
	snaps, err := ListSnapshots(cacheDir)
	if err != nil {
		return nil, err
	}
	return listStores(cacheDir, snaps)
}

// listStores is ListStores with the snapshots already listed (listing
// them reads every snapshot's metadata and lock: one pass serves both).
func listStores(cacheDir string, snaps []SnapshotInfo) ([]StoreInfo, error) {
	root := storesRoot(cacheDir)
	entries, err := os.ReadDir(root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []StoreInfo
	for _, e := range entries {
		key, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok || strings.HasPrefix(key, ".") {
			continue
		}
		s := &store{cache: cacheDir, key: key, dir: filepath.Join(root, key)}
		m, err := s.meta()
		if err != nil {
			continue
		}
		objects, _ := diskUsage(s.dir)
		info := StoreInfo{Key: key, Dir: s.dir, Repo: m.Repo, Bytes: objects + max(m.CheckoutBytes, 0)}
		if st, err := os.Stat(filepath.Join(root, key+".use")); err == nil {
			info.LastUsed = st.ModTime()
		}
		info.InUse = locked(filepath.Join(root, key+".use"))
		for _, sn := range snaps {
			if sn.Store != key {
				continue
			}
			info.Snapshots++
			info.InUse = info.InUse || sn.InUse
			if sn.LastUsed.After(info.LastUsed) {
				info.LastUsed = sn.LastUsed
			}
		}
		out = append(out, info)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].LastUsed.Before(out[j].LastUsed) })
	return out, nil
}

// CacheBytes is what the cache holds, the figure its cap applies to: the
// object stores (objects and their snapshots' files, each counted once)
// and the snapshots that hold their own objects.
func CacheBytes(cacheDir string) (int64, error) {
	snaps, err := ListSnapshots(cacheDir)
	if err != nil {
		return 0, err
	}
	stores, err := listStores(cacheDir, snaps)
	if err != nil {
		return 0, err
	}
	return cacheBytes(stores, snaps), nil
}

// cacheBytes is CacheBytes of listed stores and snapshots.
func cacheBytes(stores []StoreInfo, snaps []SnapshotInfo) int64 {
	known := map[string]bool{}
	var n int64
	for _, s := range stores {
		known[s.Key] = true
		n += s.Bytes
	}
	for _, s := range snaps {
		if !known[s.Store] {
			n += s.Bytes
		}
	}
	return n
}

// RemoveStore deletes an object store that no snapshot borrows from and
// no build is using; it reports whether it did.
func RemoveStore(s StoreInfo) (bool, error) {
	n, err := removeStoreIfUnused(filepath.Dir(filepath.Dir(s.Dir)), s.Key)
	return n > 0, err
}

// evictStores removes unused stores, least recently used first, until
// want bytes are freed.
func evictStores(cacheDir string, want int64) (int64, error) {
	stores, err := ListStores(cacheDir)
	if err != nil {
		return 0, err
	}
	var freed int64
	for _, s := range stores {
		if freed >= want {
			break
		}
		if s.InUse || s.Snapshots > 0 {
			continue
		}
		n, err := removeStoreIfUnused(cacheDir, s.Key)
		if err != nil {
			return freed, err
		}
		freed += n
	}
	return freed, nil
}

// storeRemoved removes a snapshot directory (already renamed out of
// sight) of the store key and takes what it freed off the store's count.
func storeRemoved(cacheDir, key, dir string) (int64, error) {
	s := &store{cache: cacheDir, key: key, dir: filepath.Join(storesRoot(cacheDir), key)}
	unlock, err := s.lockWrite()
	if err != nil {
		return 0, err
	}
	defer unlock()
	freed, err := removeTree(dir)
	if err != nil {
		return freed, err
	}
	if _, merr := s.meta(); merr == nil {
		err = s.updateMeta(func(m *storeMeta) { m.CheckoutBytes = max(m.CheckoutBytes-freed, 0) })
	}
	return freed, err
}

// removeStoreIfUnused removes the store key when no snapshot borrows its
// objects and no build holds it, and returns the bytes freed (0 when it
// stays).
func removeStoreIfUnused(cacheDir, key string) (int64, error) {
	root := storesRoot(cacheDir)
	if snapshotsOf(cacheDir)[key] > 0 {
		return 0, nil
	}
	usePath := filepath.Join(root, key+".use")
	use, err := os.OpenFile(usePath, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return 0, err
	}
	defer use.Close()
	if flock(use, lockEX|lockNB) != nil || !stillLinked(use, usePath) {
		return 0, nil // a build is using it
	}
	// A build that started before the lock may have added a snapshot.
	if snapshotsOf(cacheDir)[key] > 0 {
		return 0, nil
	}
	dir := filepath.Join(root, key)
	objects, _ := diskUsage(dir)
	s := &store{cache: cacheDir, key: key, dir: dir}
	if m, err := s.meta(); err == nil {
		objects += max(m.CheckoutBytes, 0)
	}
	trash, err := os.MkdirTemp(root, ".trash-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(trash)
	if err := os.Rename(dir, filepath.Join(trash, "s")); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return 0, err
	}
	for _, ext := range []string{".json", ".lock"} {
		_ = os.Remove(filepath.Join(root, key+ext))
	}
	return objects, os.Remove(usePath)
}

// snapshotsOf counts the cached snapshots of each store.
func snapshotsOf(cacheDir string) map[string]int {
	root := filepath.Join(cacheDir, "snapshots")
	out := map[string]int{}
	entries, _ := os.ReadDir(root)
	for _, e := range entries {
		c, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok || !commitName.MatchString(c) || !published(root, c) {
			continue
		}
		if m, err := readSnapshotMeta(root, c); err == nil && m.Store != "" {
			out[m.Store]++
		}
	}
	return out
}

// locked reports whether someone holds a lock on path.
func locked(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	return flock(f, lockEX|lockNB) != nil
}
