//go:build linux

package sandbox_test

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/sandgate/sandgate/sandbox"
)

// usageFile mirrors <cache>/usage.json: the cache's size as the last
// full count left it plus what builds added since.
type usageFile struct {
	Bytes   int64     `json:"bytes"`
	Counted time.Time `json:"counted"`
}

func readUsage(t *testing.T, cache string) usageFile {
	t.Helper()
	var u usageFile
	b, err := os.ReadFile(filepath.Join(cache, "usage.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &u); err != nil {
		t.Fatalf("usage.json %q: %v", b, err)
	}
	return u
}

func writeUsage(t *testing.T, cache string, u usageFile) {
	t.Helper()
	b, _ := json.Marshal(u)
	if err := os.WriteFile(filepath.Join(cache, "usage.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// cachedCommits is the set of commits the cache holds a snapshot of.
func cachedCommits(t *testing.T, cache string) map[string]bool {
	t.Helper()
	list, err := sandbox.ListSnapshots(cache)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, s := range list {
		got[s.Commit] = true
	}
	return got
}

// TestCacheCountedOnlyWhenOldOrNearTheCap: a build adds its snapshot's
// size to the kept figure instead of counting the whole cache (which
// every run on a new commit paid, seconds on a cache of thousands of
// snapshots), and counts again, evicting, when the figure is old or the
// build brings it near the cap; a snapshot already cached counts nothing.
func TestCacheCountedOnlyWhenOldOrNearTheCap(t *testing.T) {
	ctx := context.Background()
	cache := cacheDir(t)
	t.Setenv("SANDGATE_CACHE_MAX", "1TiB")
	big := makeRepo(t)
	noise := make([]byte, 256<<10)
	rand.Read(noise)
	os.WriteFile(filepath.Join(big, "noise.bin"), noise, 0o644)
	bigCommit := commitAll(t, big, "noise")
	if _, _, err := sandbox.Snapshot(ctx, big, bigCommit, cache); err != nil {
		t.Fatal(err)
	}
	// The first build finds no figure: it counts.
	total, err := sandbox.CacheBytes(cache)
	if err != nil {
		t.Fatal(err)
	}
	if u := readUsage(t, cache); u.Bytes != total {
		t.Fatalf("after the first build the kept size is %d, the cache holds %d", u.Bytes, total)
	}

	// A fresh figure far under the cap is trusted: nothing is counted,
	// so nothing goes, though the cache is now over its cap.
	t.Setenv("SANDGATE_CACHE_MAX", strconv.FormatInt(total, 10)+"B")
	counted := time.Now().Add(-time.Minute).UTC().Round(time.Second)
	writeUsage(t, cache, usageFile{Bytes: 0, Counted: counted})
	small := makeRepo(t)
	_, smallCommit, err := sandbox.Snapshot(ctx, small, "HEAD", cache)
	if err != nil {
		t.Fatal(err)
	}
	u := readUsage(t, cache)
	if !cachedCommits(t, cache)[bigCommit] || u.Bytes <= 0 || u.Bytes >= total || !u.Counted.Equal(counted) {
		t.Fatalf("a build under a fresh figure: cached %v, kept %+v (counted %v); want the big snapshot kept and the figure grown by the small one's size", cachedCommits(t, cache), u, counted)
	}
	// The build's addition counts the object store it filled, not only
	// the snapshot's own files (its metadata's Bytes): a change's objects
	// go to the store, and a figure without them would let a hostile
	// change's objects grow the cache past its cap unseen.
	for _, sn := range must(sandbox.ListSnapshots(cache)) {
		if sn.Commit == smallCommit && u.Bytes <= sn.Bytes {
			t.Fatalf("the kept size grew by %d, the snapshot's own files alone: its store's objects are not counted", u.Bytes)
		}
	}
	// A snapshot already cached adds nothing.
	if _, _, err := sandbox.Snapshot(ctx, small, "HEAD", cache); err != nil {
		t.Fatal(err)
	}
	if again := readUsage(t, cache); again != u {
		t.Fatalf("a cached snapshot's lease changed the kept size: %+v, was %+v", again, u)
	}

	// An old figure is counted again: the least recently used snapshot
	// goes to bring the cache under its cap.
	old := time.Now().Add(-time.Hour)
	os.Chtimes(filepath.Join(cache, "snapshots", bigCommit+".lock"), old, old)
	writeUsage(t, cache, usageFile{Bytes: 0, Counted: time.Now().Add(-11 * time.Minute)})
	third := makeRepo(t)
	os.WriteFile(filepath.Join(third, "third.txt"), []byte("third\n"), 0o644)
	commitAll(t, third, "third")
	recount := time.Now()
	if _, _, err := sandbox.Snapshot(ctx, third, "HEAD", cache); err != nil {
		t.Fatal(err)
	}
	now, _ := sandbox.CacheBytes(cache)
	if u := readUsage(t, cache); cachedCommits(t, cache)[bigCommit] || u.Bytes != now || u.Counted.Before(recount) {
		t.Fatalf("a build under an old figure: cached %v, kept %+v, the cache holds %d; want the big snapshot evicted and the figure counted", cachedCommits(t, cache), u, now)
	}
	if !cachedCommits(t, cache)[smallCommit] {
		t.Fatalf("the eviction took more than it needed: %v", cachedCommits(t, cache))
	}

	// A fresh figure the build brings within a tenth of the cap is
	// counted again too.
	writeUsage(t, cache, usageFile{Bytes: total - total/20, Counted: time.Now()})
	fourth := makeRepo(t)
	os.WriteFile(filepath.Join(fourth, "fourth.txt"), []byte("fourth\n"), 0o644)
	commitAll(t, fourth, "fourth")
	if _, _, err := sandbox.Snapshot(ctx, fourth, "HEAD", cache); err != nil {
		t.Fatal(err)
	}
	now, _ = sandbox.CacheBytes(cache)
	if u := readUsage(t, cache); u.Bytes != now {
		t.Fatalf("a build near the cap kept %+v, the cache holds %d: not counted", u, now)
	}
}
