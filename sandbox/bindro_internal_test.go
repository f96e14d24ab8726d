//go:build linux

package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestBindROBothWays: the one-call read-only bind (mount_setattr, Linux
// 5.12) and the mount-by-mount fallback older kernels take both leave
// the bind and every mount below it read-only, and the source as it was.
// They run in a mount namespace of the test's own thread.
func TestBindROBothWays(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root for a mount namespace")
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	os.MkdirAll(filepath.Join(src, "sub"), 0o755)
	os.WriteFile(filepath.Join(src, "file"), []byte("x"), 0o644)
	errc := make(chan error, 1)
	go func() {
		// The thread never goes back to the runtime: it dies with its
		// mount namespace when this goroutine returns.
		runtime.LockOSThread()
		errc <- func() error {
			if err := unix.Unshare(unix.CLONE_NEWNS); err != nil {
				return err
			}
			if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
				return err
			}
			if err := unix.Mount("tmpfs", filepath.Join(src, "sub"), "tmpfs", 0, "size=1m"); err != nil {
				return err
			}
			for name, bind := range map[string]func(src, dst string) error{
				"tree":   bindROTree,
				"legacy": func(src, dst string) error { return bindROLegacy(src, dst, true) },
				"file":   func(src, dst string) error { return bindROLegacy(src+"/file", dst+"/file", false) },
			} {
				dst := filepath.Join(dir, name)
				os.MkdirAll(dst, 0o755)
				if name == "file" {
					os.WriteFile(dst+"/file", nil, 0o644)
				}
				if err := bind(src, dst); err != nil {
					return err
				}
				if err := checkMounts(dst, "ro", map[string]int{"tree": 2, "legacy": 2, "file": 1}[name]); err != nil {
					return err
				}
			}
			return checkMounts(src+"/sub", "rw", 1)
		}()
	}()
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
}

// checkMounts checks that want mounts are at or below p, each with
// mode (ro or rw).
func checkMounts(p, mode string, want int) error {
	data, err := os.ReadFile("/proc/thread-self/mountinfo")
	if err != nil {
		return err
	}
	n := 0
	for _, l := range strings.Split(string(data), "\n") {
		f := strings.Fields(l)
		if len(f) < 6 || f[4] != p && !strings.HasPrefix(f[4], p+"/") {
			continue
		}
		n++
		if strings.Split(f[5], ",")[0] != mode {
			return fmt.Errorf("%s is mounted %s, want %s", f[4], f[5], mode)
		}
	}
	if n != want {
		return fmt.Errorf("%d mounts at or below %s, want %d", n, p, want)
	}
	return nil
}
