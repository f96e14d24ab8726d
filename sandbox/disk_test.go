//go:build linux

package sandbox_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/sandgate/sandgate/sandbox"
)

const testDisk = 64 << 20

// diskBox starts an overlay box (as runs use) with a 64 MiB disk and a
// copy-on-write cache in the home directory, as GoCaches does.
func diskBox(t *testing.T, noOverlay bool) (*sandbox.Box, string) {
	t.Helper()
	snap, cache, state := t.TempDir(), t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(snap, "main.go"), []byte("package main\n"), 0o644)
	os.WriteFile(filepath.Join(cache, "warm"), []byte("cached\n"), 0o644)
	p := sandbox.Policy{Limits: sandbox.Limits{DiskBytes: testDisk},
		Caches: []sandbox.Cache{{Host: cache, Box: sandbox.HomeDir + "/.cache/c", Env: "CACHE"}}}
	b, err := sandbox.Start(context.Background(), sandbox.Options{Policy: p, Snapshot: snap, StateDir: state, NoOverlay: noOverlay})
	if err != nil {
		t.Fatalf("start box: %v", err)
	}
	t.Cleanup(func() { b.Close() })
	return b, state
}

// hostBytes is what the box's state takes on the host disk: allocated
// blocks, not apparent sizes, so sparse files count for what they hold.
func hostBytes(t *testing.T, dir string) int64 {
	t.Helper()
	var n int64
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err == nil {
			n += fi.Sys().(*syscall.Stat_t).Blocks * 512
		}
		return nil
	})
	return n
}

// TestAttackFillTheDisk writes past the disk limit in every place the box
// can write. Each write must fail with ENOSPC inside the box, the host
// must not pay more than the limit, and the box must work again once the
// file is gone.
func TestAttackFillTheDisk(t *testing.T) {
	for _, mode := range []struct {
		name      string
		noOverlay bool
	}{{"overlay", false}, {"copy", true}} {
		t.Run(mode.name, func(t *testing.T) {
			b, state := diskBox(t, mode.noOverlay)
			for what, target := range map[string]string{
				"workspace": "/work/fill", "tmp": "/tmp/fill", "home": "$HOME/fill", "cache": "$CACHE/fill",
			} {
				fillAndRecover(t, b, state, what, "head -c 200M /dev/zero > "+target, target)
			}
			fillAndRecover(t, b, state, "1 TiB sparse file", "truncate -s 1T /tmp/sparse && ls -ls /tmp/sparse && dd if=/dev/zero of=/tmp/sparse bs=1M count=200 seek=4096 conv=notrunc", "/tmp/sparse")
			fillAndRecover(t, b, state, "dd into the workspace", "dd if=/dev/urandom of=/work/dd bs=1M count=200", "/work/dd")
		})
	}
}

func fillAndRecover(t *testing.T, b *sandbox.Box, state, what, script, file string) {
	t.Helper()
	res := sh(t, b, script)
	if res.ExitCode == 0 {
		t.Errorf("BREACH: %s: wrote 200 MiB under a 64 MiB disk limit:\n%s", what, res.Output)
	}
	if !strings.Contains(string(res.Output), "No space left on device") {
		t.Errorf("%s: the write did not fail with ENOSPC: exit %d\n%s", what, res.ExitCode, res.Output)
	}
	if !res.DiskFull || !strings.Contains(res.DiskNote, "disk limit of 64 MiB was reached") {
		t.Errorf("%s: the result does not say the disk limit was reached: %v %q", what, res.DiskFull, res.DiskNote)
	}
	// The image's metadata and the state's small files are the slack.
	if used := hostBytes(t, state); used > testDisk+(4<<20) {
		t.Errorf("BREACH: %s: the box's state takes %d MiB on the host, over the %d MiB limit", what, used>>20, testDisk>>20)
	}
	if res := sh(t, b, "rm -f "+file+" && head -c 16M /dev/zero > /tmp/after && rm /tmp/after && echo ok"); res.ExitCode != 0 || res.DiskFull {
		t.Fatalf("%s: the box does not work after the file was deleted: exit %d\n%s", what, res.ExitCode, res.Output)
	}
}

// TestDiskSharedAndWritable: the box's writable places are one budget,
// writable by a non-root user too (/tmp is 1777), and survive a new box
// on the same state (a resumed run) while the host sees the workspace's
// upper layer.
func TestDiskSharedAndWritable(t *testing.T) {
	b, state := diskBox(t, false)
	res := sh(t, b, "echo changed > main.go && stat -c %a /tmp && cat $CACHE/warm && df -k /tmp /work $HOME | tail -n +2")
	if res.ExitCode != 0 || !strings.HasPrefix(string(res.Output), "1777\ncached\n") {
		t.Fatalf("exit %d\n%s", res.ExitCode, res.Output)
	}
	if got, _ := os.ReadFile(filepath.Join(b.Upper(), "main.go")); string(got) != "changed\n" {
		t.Fatalf("the harness does not see the change in the upper layer: %q", got)
	}
	b.Close()
	b2, err := sandbox.Start(context.Background(), sandbox.Options{Policy: sandbox.Policy{Limits: sandbox.Limits{DiskBytes: testDisk}},
		Snapshot: t.TempDir(), StateDir: state})
	if err != nil {
		t.Fatal(err)
	}
	defer b2.Close()
	if res := sh(t, b2, "cat main.go"); string(res.Output) != "changed\n" {
		t.Fatalf("the change did not survive into a new box on the same state: %q", res.Output)
	}
}

// TestDiskLeavesNothingMounted: closing a box leaves no mount and no loop
// device behind on the host, and Discard removes its state.
func TestDiskLeavesNothingMounted(t *testing.T) {
	b, state := diskBox(t, false)
	sh(t, b, "head -c 1M /dev/zero > /work/f")
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	img, _ := filepath.EvalSymlinks(filepath.Join(state, "disk.img"))
	for _, f := range []string{"/proc/self/mountinfo"} {
		data, _ := os.ReadFile(f)
		if strings.Contains(string(data), state) {
			t.Errorf("a mount of the box's state is left on the host:\n%s", data)
		}
	}
	// The loop device goes when the kernel tears down the last mount of
	// the disk, which can finish just after Close: a leak is one that
	// stays.
	if err := sandbox.WaitImageFree(img, 10*time.Second); err != nil {
		t.Errorf("a loop device still holds the box's disk: %v", err)
	}
	if err := b.Discard(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(state); !os.IsNotExist(err) {
		t.Errorf("Discard left the box's state: %v", err)
	}
}

// TestDiskFailsClosed: a disk the host has no room for is refused (the
// box would fill the host's disk instead of its own), and so is a box
// without mkfs.ext4: it refuses to start rather than run without a limit.
func TestDiskFailsClosed(t *testing.T) {
	huge := sandbox.Policy{Limits: sandbox.Limits{DiskBytes: 1 << 50}}
	b, err := sandbox.Start(context.Background(), sandbox.Options{Policy: huge, Workspace: t.TempDir(), StateDir: t.TempDir()})
	if err == nil {
		b.Close()
		t.Fatal("the box started with a 1 PiB disk limit the host cannot hold")
	}
	if !strings.Contains(err.Error(), "more than the host has free") {
		t.Fatalf("the error does not say the host lacks room: %v", err)
	}
	if os.Geteuid() != 0 {
		return // a rootless box's disk is a tmpfs: no mkfs.ext4 to miss
	}
	t.Setenv("PATH", t.TempDir())
	b, err = sandbox.Start(context.Background(), sandbox.Options{Workspace: t.TempDir(), StateDir: t.TempDir()})
	if err == nil {
		b.Close()
		t.Fatal("the box started without a disk limit")
	}
	if !strings.Contains(err.Error(), "mkfs.ext4") || !errors.Is(err, sandbox.ErrUnavailable) {
		t.Fatalf("the error does not name what is missing: %v", err)
	}
}

// TestDiskWaitsForThePreviousMount: a run resumed right after its harness
// was killed finds its disk image still attached while the old box is
// torn down; that mount's writes reach the image only when it goes. The
// new box must wait for it (and see the change) rather than mount the
// image a second time, and must fail closed if it is never let go.
func TestDiskWaitsForThePreviousMount(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("loop devices need root; a rootless box's disk is a tmpfs")
	}
	b, state := diskBox(t, false)
	sh(t, b, "echo changed > main.go")
	b.Close()
	img := filepath.Join(state, "disk.img")
	start := func() (*sandbox.Box, error) {
		return sandbox.Start(context.Background(), sandbox.Options{Policy: sandbox.Policy{Limits: sandbox.Limits{DiskBytes: testDisk}},
			Snapshot: t.TempDir(), StateDir: state})
	}

	held, err := sandbox.AttachLoop(img)
	if err != nil {
		t.Fatal(err)
	}
	restore := sandbox.SetImageFreeTimeout(300 * time.Millisecond)
	if b2, err := start(); err == nil {
		b2.Close()
		held.Close()
		t.Fatal("a box mounted a disk image another loop device still holds")
	} else if !errors.Is(err, sandbox.ErrUnavailable) || !strings.Contains(err.Error(), "still attached") {
		t.Errorf("error does not say why: %v", err)
	}
	restore()

	var released atomic.Bool
	go func() {
		time.Sleep(300 * time.Millisecond)
		released.Store(true)
		held.Close() // autoclear detaches the device
	}()
	b2, err := start()
	if err != nil {
		t.Fatal(err)
	}
	defer b2.Close()
	if !released.Load() {
		t.Fatal("the box started while the image was still attached elsewhere")
	}
	if res := sh(t, b2, "cat main.go"); string(res.Output) != "changed\n" {
		t.Fatalf("the resumed box lost the change: %q", res.Output)
	}
}

// TestAttackRawDiskIsOutOfReach: the box's code looks for its disk's
// whole filesystem (where the overlay's work directory and every cache's
// upper layer live, and where it could write past what it is shown) and
// for the host directory it was attached at while the box was built.
// Only the parts the box is given are mounted: never the disk's root.
func TestAttackRawDiskIsOutOfReach(t *testing.T) {
	for _, noOverlay := range []bool{false, true} {
		b, _ := diskBox(t, noOverlay)
		// mountinfo: field 4 is the mount's root in its filesystem,
		// the fields after " - " its type and source.
		res := sh(t, b, `awk '{for (i = 7; $i != "-"; i++); if ($4 == "/" && $(i+1) == "ext4") print}' /proc/self/mountinfo
			for d in / /.disk /.oldroot /root/.cache/sandgate/box-disk; do ls -d "$d"/ovlwork "$d"/caches 2>/dev/null; done
			find / -xdev -maxdepth 4 -name ovlwork 2>/dev/null; true`)
		if res.ExitCode != 0 || strings.TrimSpace(string(res.Output)) != "" {
			t.Errorf("noOverlay=%v: the box reaches its raw disk (exit %d):\n%s", noOverlay, res.ExitCode, res.Output)
		}
	}
}
