package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sandgate/sandgate/sandbox"
)

// TestPruneImages: prune removes an unpacked image unused for
// --older-than, names and keeps one a live run leases, and sandbox
// check lists both with their sizes.
func TestPruneImages(t *testing.T) {
	cache := t.TempDir()
	unpack := func(rootfs string) ([]string, error) {
		return nil, os.WriteFile(filepath.Join(rootfs, "tool"), make([]byte, 64<<10), 0o755)
	}
	idleDigest, heldDigest := "sha256:"+strings.Repeat("1", 64), "sha256:"+strings.Repeat("2", 64)
	idle, err := sandbox.LeaseImage(cache, idleDigest, unpack)
	if err != nil {
		t.Fatal(err)
	}
	idle.Release()
	held, err := sandbox.LeaseImage(cache, heldDigest, unpack)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Release()
	old := time.Now().Add(-30 * 24 * time.Hour)
	for _, key := range []string{idle.Key, held.Key} {
		os.Chtimes(filepath.Join(cache, "images", key+".lock"), old, old)
	}
	if line := imagesLine(cache); !strings.Contains(line, "2 unpacked images") || !strings.Contains(line, idleDigest) ||
		!strings.Contains(line, heldDigest) || !strings.Contains(line, "in use") {
		t.Errorf("sandbox check's image lines:\n%s", line)
	}
	f := &pruneFixture{runs: t.TempDir(), reviews: t.TempDir(), cache: cache}
	code, out, errs := f.prune()
	if code != exitOK {
		t.Fatalf("exit %d: %s%s", code, out, errs)
	}
	if !strings.Contains(out, "removed image    "+idleDigest) || !strings.Contains(out, "kept image "+heldDigest) {
		t.Errorf("prune output:\n%s", out)
	}
	if exists(filepath.Join(cache, "images", idle.Key)) {
		t.Errorf("the idle image was not pruned:\n%s", out)
	}
	if !exists(filepath.Join(held.RootFS, "tool")) {
		t.Errorf("BREACH: prune removed an image a live run leases:\n%s", out)
	}
}
