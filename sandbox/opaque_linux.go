//go:build linux

package sandbox

import "golang.org/x/sys/unix"

// isOpaque reports an overlayfs opaque directory (it hides the lower one).
// The box mounts with userxattr, so the marker is in the user namespace.
func isOpaque(p string) bool {
	buf := make([]byte, 4)
	for _, name := range []string{"user.overlay.opaque", "trusted.overlay.opaque"} {
		n, err := unix.Lgetxattr(p, name, buf)
		if err == nil && n > 0 && buf[0] == 'y' {
			return true
		}
	}
	return false
}
