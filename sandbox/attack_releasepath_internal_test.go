//go:build linux

package sandbox

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestAttackImageThroughAnotherPathWaitsForItsRelease: a run resumed on
// a box's image must wait until no box holds it (two live mounts of one
// ext4 image corrupt it), whatever path names the image: the StateDir of
// a resumed run may reach it through a symlink (a linked runs directory,
// /tmp on some hosts) that the closing box did not go through. Both
// waits are checked: the loop device's (another process's run, or a
// release under way) and this process's release after Close.
func TestAttackImageThroughAnotherPathWaitsForItsRelease(t *testing.T) {
	if rootless() {
		t.Skip("rootless: the disk is a tmpfs, no image to mount twice")
	}
	real := t.TempDir()
	link := filepath.Join(t.TempDir(), "runs")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	b, err := Start(context.Background(), Options{Workspace: t.TempDir(), StateDir: real})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if b.disk == nil || b.disk.image == "" {
		t.Fatal("setup: the box has no disk image")
	}
	via := filepath.Join(link, "disk.img")
	if err := waitImageFree(via, 200*time.Millisecond); err == nil {
		t.Errorf("BREACH: a run resumed through %s finds %s free while the box holds it on a loop device: it would mount the image twice", via, b.disk.image)
	}
	if releaseKey(via) != releaseKey(b.disk.image) {
		t.Errorf("BREACH: a run resumed through %s would not wait for the release of %s after Close: %q != %q", via, b.disk.image, releaseKey(via), releaseKey(b.disk.image))
	}
	// End to end: a second box on the held image, through the link, must
	// fail closed rather than mount it a second time.
	defer func(d time.Duration) { imageFreeTimeout = d }(imageFreeTimeout)
	imageFreeTimeout = 300 * time.Millisecond
	if c, err := Start(context.Background(), Options{Workspace: t.TempDir(), StateDir: link}); err == nil {
		c.Close()
		t.Errorf("BREACH: a second box started on %s through %s while the first box holds it: two mounts of one ext4 image", b.disk.image, link)
	}
}
