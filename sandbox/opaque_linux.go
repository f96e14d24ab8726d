//go:build linux

package sandbox

import (
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// isOpaque reports an overlayfs opaque directory (it hides the lower one).
// The box mounts with userxattr, so the marker is in the user namespace.
// The directory is opened inside the layer, never through a link.
func isOpaque(layer *os.Root, rel string) bool {
	f, err := layer.OpenFile(rel, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_DIRECTORY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	buf := make([]byte, 4)
	for _, name := range []string{"user.overlay.opaque", "trusted.overlay.opaque"} {
		n, err := unix.Fgetxattr(int(f.Fd()), name, buf)
		if err == nil && n > 0 && buf[0] == 'y' {
			return true
		}
	}
	return false
}
