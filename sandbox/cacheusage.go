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
// what the snapshots built since added (their metadata's Bytes), kept in
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
// the kept size grows by added. What the kept size misses (object stores
// growing by a fetch, files removed by hand) is bounded by the recount's
// age and the tenth held back. Eviction never fails a run: errors leave
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
