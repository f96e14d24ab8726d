package sandbox

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"time"
)

// usageRecount is how old the cache's kept size may be before a build
// counts the cache again instead of adding to it.
const usageRecount = 10 * time.Minute

// cacheUsage is the cache's size as the last full count left it, plus
// what the snapshots built since added (builtBytes), kept in
// <cache>/usage.json under its flock.
type cacheUsage struct {
	Bytes   int64     `json:"bytes"`
	Counted time.Time `json:"counted"`
}

// evictAfterBuild trims the cache to CacheMax after a build added added
// bytes to it. Counting the cache reads every snapshot's metadata and
// lock and walks every object store (1.6-2.4 s for 2,700 snapshots and
// 3,200 stores, 2026-12-06), which every run on a new commit paid; so the
// count runs only when the kept size is missing, older than usageRecount,
// from the future, or with added within a tenth of the cap; otherwise
// the kept size grows by added (builtBytes: an overstatement, never
// less than the build added). Files removed by hand make it overstate
// too, until the next count. Eviction never fails a run: errors leave
// the cache as it is.
func evictAfterBuild(cacheDir string, added int64) {
	max := CacheMax()
	f, err := lockFile(filepath.Join(cacheDir, "usage.json"), lockEX)
	if err != nil {
		_, _ = EvictSnapshots(cacheDir, max)
		return
	}
	defer f.Close()
	var u cacheUsage
	b, err := io.ReadAll(f)
	if err == nil && json.Unmarshal(b, &u) == nil {
		age := time.Since(u.Counted)
		if u.Bytes >= 0 && added >= 0 && age >= 0 && age < usageRecount && u.Bytes+added <= max-max/10 {
			writeUsage(f, cacheUsage{Bytes: u.Bytes + added, Counted: u.Counted})
			return
		}
	}
	_, total, err := evict(cacheDir, max)
	if err != nil {
		_ = f.Truncate(0) // count again next time
		return
	}
	writeUsage(f, cacheUsage{Bytes: total, Counted: time.Now()})
}

// builtBytes is at most what building commit's snapshot added to the
// cache: its own files, and the whole object store it borrows from (a
// build may have fetched into it, and the objects of a commit from a
// hostile change are what a derived snapshot imports). Counting the
// store whole overstates a build; the kept size then nears the cap
// sooner and is counted again, which is the safe side. One store is a
// few pack files: walking it costs little, unlike walking them all.
func builtBytes(cacheDir, root, commit string) int64 {
	m, _ := readSnapshotMeta(root, commit)
	n := max(m.Bytes, 0)
	if m.Store != "" {
		objects, _ := diskUsage(filepath.Join(storesRoot(cacheDir), m.Store))
		n += objects
	}
	return n
}

// writeUsage replaces the usage file's content (the file stays: its
// flock is what orders the writers).
func writeUsage(f *os.File, u cacheUsage) {
	b, err := json.Marshal(u)
	if err != nil {
		return
	}
	if f.Truncate(0) == nil {
		_, _ = f.WriteAt(b, 0)
	}
}
