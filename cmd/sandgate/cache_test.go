package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/sandgate/sandgate/sandbox"
)

// privateCache points the sandbox cache (sandbox.DefaultCacheDir: the
// snapshots, object stores, warm build cache and box pools) at a
// directory of this test binary's own, through XDG_CACHE_HOME, which the
// CLI processes and boxes the tests start inherit; it returns what
// removes it.
//
// Why: the shared ~/.cache/sandgate keeps the snapshot of every commit any
// test on the machine ever ran (10,300 snapshots and 9,400 stores on
// 2026-12-06, a few KiB each, far under the cap), and every test's
// repository is a new commit, so each run of this binary added hundreds.
// Counting that cache was 40% of the harness's CPU here when every lease
// counted it; a build still counts it when the kept size is ten minutes
// old (sandbox/cacheusage.go), which in a binary running for minutes is
// several full counts of a cache that only grows. Nothing the tests check
// depends on an old cache.
//
// The Go build cache stays the user's: GOCACHE is pinned to it before
// XDG_CACHE_HOME moves (its default lives there), because the boxes see
// it read-only and .ci/run warms it for them. Without go to ask, the
// cache is left where it is.
//
// Unpacked images stay shared (the private cache's images is a link to
// the shared one's): the language tests' images come out the same on
// every run of the binary, and unpacking them again took 30-40 s. Images
// are few, so their eviction check costs nothing.
func privateCache() (remove func()) {
	shared := sandbox.DefaultCacheDir()
	gocache, err := exec.Command("go", "env", "GOCACHE").Output()
	if err != nil || strings.TrimSpace(string(gocache)) == "" {
		return func() {}
	}
	dir, err := os.MkdirTemp("", "sandgate-test-cache-")
	if err != nil {
		return func() {}
	}
	if os.MkdirAll(filepath.Join(shared, "images"), 0o755) == nil && os.MkdirAll(filepath.Join(dir, "sandgate"), 0o755) == nil {
		_ = os.Symlink(filepath.Join(shared, "images"), filepath.Join(dir, "sandgate", "images"))
	}
	os.Setenv("GOCACHE", strings.TrimSpace(string(gocache)))
	os.Setenv("XDG_CACHE_HOME", dir)
	return func() {
		// Views of layered snapshots stay mounted until unmounted.
		_ = sandbox.UnmountViews(filepath.Join(dir, "sandgate"))
		os.RemoveAll(dir) // the link to the shared images, not what it leads to
	}
}
