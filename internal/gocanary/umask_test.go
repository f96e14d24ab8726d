//go:build unix

package gocanary

import (
	"io/fs"
	"path/filepath"
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
func TestCacheWritesKeepTheCallersUmask(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("GOCACHE", cache)
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	dir := module(t, fixed, nil)
	run(t, dir, []string{"calc.go"}, both)
	var private []string
	err := filepath.WalkDir(cache, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if info.Mode().Perm()&0o044 != 0o044 {
			private = append(private, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(private) > 0 {
		t.Fatalf("%d build cache entries are not readable by others, e.g. %s", len(private), private[0])
	}
}
