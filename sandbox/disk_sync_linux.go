//go:build linux

package sandbox

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"

	"golang.org/x/sys/unix"
)

// The box's disk is mounted without write barriers (ext4 nobarrier).
//
// With barriers, each journal commit and the sync as the filesystem is
// unmounted send the loop device a flush, which it turns into an fsync
// of the image file: a write to the host's disk that the box's close
// waited for (ext4_put_super → sync_filesystem, 11–20 ms of a 40 ms
// start and close at load 8, measured with timestamps in Close). Without
// them the same data still reaches the image file at every commit and at
// unmount, in the host's page cache: a harness that crashes or is killed
// leaves the image whole, and a resumed run finds its change, as before.
// Only a crash of the host itself (power, kernel) can lose the order of
// those writes and leave a torn filesystem, and the box's disk is scratch
// space a box fills, not what the user keeps.
//
// A torn image is never mounted as it is: the image carries the boot id
// of the host that wrote it (an extended attribute), and an image from
// another boot (or with no record) is checked and repaired by e2fsck
// before it is attached. e2fsck runs in userspace on a file the harness
// owns; if it cannot make the filesystem consistent, the box fails.

// bootAttr names the image's extended attribute holding the boot id of
// the host that last mounted it.
const bootAttr = "user.sandgate.boot"

// bootID is this boot's id, or nil when the kernel has none to tell.
func bootID() []byte {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return nil
	}
	return bytes.TrimSpace(b)
}

// markBoot records on image that this boot wrote it.
func markBoot(image string) error {
	id := bootID()
	if id == nil {
		return nil // nothing to record: every resume is checked
	}
	if err := unix.Setxattr(image, bootAttr, id, 0); err != nil && !errors.Is(err, unix.ENOTSUP) {
		return fmt.Errorf("disk image: record the boot: %w", err)
	}
	return nil
}

// renameMarked records the boot on a new image (see markBoot) and gives
// it its name.
func renameMarked(tmp, path string) error {
	if err := markBoot(tmp); err != nil {
		_ = os.Remove(tmp)
		return err
	}
	return os.Rename(tmp, path)
}

// checkAfterReboot repairs a resumed run's image that this boot did not
// write (see above) before anything mounts it.
func checkAfterReboot(image string) error {
	id := bootID()
	buf := make([]byte, 64)
	n, err := unix.Getxattr(image, bootAttr, buf)
	if id != nil && err == nil && bytes.Equal(buf[:n], id) {
		return nil
	}
	fsck, err := exec.LookPath("e2fsck")
	if err != nil {
		return fmt.Errorf("%w: the box's disk image %s was written before the host restarted and needs e2fsck (Debian package e2fsprogs): %w", ErrUnavailable, image, err)
	}
	out, err := exec.Command(fsck, "-f", "-y", image).CombinedOutput()
	var exit *exec.ExitError
	// Exit codes 1 and 2 mean errors were found and corrected.
	if err != nil && !(errors.As(err, &exit) && exit.ExitCode() < 4) {
		return fmt.Errorf("%w: the box's disk image %s was written before the host restarted and e2fsck could not repair it: %w: %s",
			ErrUnavailable, image, err, strings.TrimSpace(string(out)))
	}
	return markBoot(image)
}
