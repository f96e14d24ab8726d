//go:build linux

package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestAttackImageThroughAnotherPathWaitsForItsRelease: a run resumed on
// a box's image must wait until no box holds it (two live mounts of one
// ext4 image corrupt it), whatever path names the image: the StateDir of
// a resumed run may reach it through a symlink (a linked runs directory,
// /tmp on some hosts) that the closing box did not go through.
func TestAttackImageThroughAnotherPathWaitsForItsRelease(t *testing.T) {
	if rootless() {
		t.Skip("rootless: the disk is a tmpfs, no image to mount twice")
	}
	real := t.TempDir()
	link := filepath.Join(t.TempDir(), "runs")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	imageHeldThrough(t, real, link)
}

// TestAttackImageThroughBindMountWaitsForItsRelease: as above, through a
// bind mount of the runs directory (a container's volume, a second mount
// of the same disk): no symlink to resolve, and a path the loop device
// never reports. Only the file's identity (device and inode) names it
// both ways.
func TestAttackImageThroughBindMountWaitsForItsRelease(t *testing.T) {
	if rootless() {
		t.Skip("rootless: the disk is a tmpfs, no image to mount twice")
	}
	real, alias := t.TempDir(), t.TempDir()
	if err := unix.Mount(real, alias, "", unix.MS_BIND, ""); err != nil {
		t.Fatalf("setup: bind %s on %s: %v", real, alias, err)
	}
	t.Cleanup(func() { _ = unix.Unmount(alias, unix.MNT_DETACH) }) // before TempDir's removal
	imageHeldThrough(t, real, alias)
}

// imageHeldThrough starts a box whose StateDir is real and checks that
// its image, reached through alias, is seen as held by both waits: the
// loop device's (another process's run, or a release under way) and
// this process's release after Close; and that a second box started on
// it through alias fails closed rather than mount it a second time.
func imageHeldThrough(t *testing.T, real, alias string) {
	t.Helper()
	b, err := Start(context.Background(), Options{Workspace: t.TempDir(), StateDir: real})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if b.disk == nil || b.disk.image == "" {
		t.Fatal("setup: the box has no disk image")
	}
	via := filepath.Join(alias, "disk.img")
	if err := waitImageFree(via, 200*time.Millisecond); err == nil {
		t.Errorf("BREACH: a run resumed through %s finds %s free while the box holds it on a loop device: it would mount the image twice", via, b.disk.image)
	}
	if !sameRelease(releaseKeys(via), releaseKeys(b.disk.image)) {
		t.Errorf("BREACH: a run resumed through %s would not wait for the release of %s after Close: %q, %q", via, b.disk.image, releaseKeys(via), releaseKeys(b.disk.image))
	}
	defer func(d time.Duration) { imageFreeTimeout = d }(imageFreeTimeout)
	imageFreeTimeout = 300 * time.Millisecond
	c, err := Start(context.Background(), Options{Workspace: t.TempDir(), StateDir: alias})
	if err == nil {
		c.Close()
		t.Errorf("BREACH: a second box started on %s through %s while the first box holds it: two mounts of one ext4 image", b.disk.image, alias)
	} else if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "still attached") {
		t.Errorf("the second box failed, but not because the first holds the image: %v", err)
	}
}

// sameRelease: a release registered under a's keys is found under b's.
func sameRelease(a, b []string) bool {
	for _, k := range a {
		for _, l := range b {
			if k == l {
				return true
			}
		}
	}
	return false
}

// TestAttackLaterInitHoldsNothingOfAnEarlierBox: the harness holds each
// box's mount namespace (from its start until after its Close) and its
// disk's mount. A box started meanwhile (pooled or cold) must not inherit
// either into its init: init is the box's PID 1, and with a namespace fd
// of another box's it could enter that box's mounts (its workspace and
// disk, read-write).
func TestAttackLaterInitHoldsNothingOfAnEarlierBox(t *testing.T) {
	start := func() *Box { return plainBox(t) }
	a := start()
	if len(a.deadNS) == 0 {
		t.Fatal("setup: the harness holds no mount namespace of the first box")
	}
	ns, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/mnt", a.cmd.Process.Pid))
	if err != nil {
		t.Fatal(err)
	}
	var diskDev uint64
	if a.disk != nil && a.disk.mnt != nil {
		var st unix.Stat_t
		if err := unix.Fstat(int(a.disk.mnt.Fd()), &st); err != nil {
			t.Fatal(err)
		}
		diskDev = st.Dev
	}
	for i := 0; i < 2; i++ { // the second is the pool's spare when there is a pool
		b := start()
		fds, _ := filepath.Glob(fmt.Sprintf("/proc/%d/fd/*", b.cmd.Process.Pid))
		if len(fds) == 0 {
			t.Fatal("setup: cannot list the later init's descriptors")
		}
		for _, fd := range fds {
			if l, _ := os.Readlink(fd); l == ns {
				t.Errorf("BREACH: the later box's init holds the first box's mount namespace (%s)", fd)
			}
			var st unix.Stat_t
			if diskDev != 0 && unix.Stat(fd, &st) == nil && st.Dev == diskDev {
				t.Errorf("BREACH: the later box's init holds a file of the first box's disk (%s)", fd)
			}
		}
	}
}
