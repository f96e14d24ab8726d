//go:build unix

package gocanary

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestCacheWritesKeepTheCallersUmask: the canary's go test writes the
// build cache with the caller's umask, not the private one of the
// canary's directory. Where the cache outlives the gate (isolation: none,
// the host's cache), an entry left 0600 is unreadable to the boxes that
// show that cache to another uid, and go then says std packages such as
// debug/gosym are "not in std" (seen in cmd/sandgate's canary attack test
// after this package's tests had run on the same host).
//
// It runs on the host's build cache, as that gate does, and checks every
// entry the run added: the sealed package and its test are new each run.
// (An empty cache of its own had the run compile the standard library
// too: a minute under -race's neighbours, for the same check.)
func TestCacheWritesKeepTheCallersUmask(t *testing.T) {
	out, err := exec.Command("go", "env", "GOCACHE").Output()
	cache := strings.TrimSpace(string(out))
	if err != nil || !filepath.IsAbs(cache) {
		t.Fatalf("go env GOCACHE: %q %v", out, err)
	}
	before := map[string]bool{}
	walkFiles(t, cache, func(p string, _ fs.DirEntry) { before[p] = true })
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	dir := module(t, fixed, nil)
	run(t, dir, []string{"calc.go"}, both)
	var added, private []string
	walkFiles(t, cache, func(p string, d fs.DirEntry) {
		if before[p] {
			return
		}
		added = append(added, p)
		if info, err := d.Info(); err == nil && info.Mode().Perm()&0o044 != 0o044 {
			private = append(private, p)
			// Readable again: the boxes of every test on this host
			// share this cache, and this failure must not become theirs.
			_ = os.Chmod(p, info.Mode().Perm()|0o044)
		}
	})
	if len(added) == 0 {
		t.Fatal("the run added no build cache entry: nothing was checked")
	}
	if len(private) > 0 {
		t.Fatalf("%d of the %d build cache entries the run added are not readable by others, e.g. %s", len(private), len(added), private[0])
	}
}

// walkFiles calls f for every file under dir.
func walkFiles(t *testing.T, dir string, f func(string, fs.DirEntry)) {
	t.Helper()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p != dir && errors.Is(err, fs.ErrNotExist) {
				return nil // trimmed by another go command meanwhile
			}
			return err
		}
		if !d.IsDir() {
			f(p, d)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
