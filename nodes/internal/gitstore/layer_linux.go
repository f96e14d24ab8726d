//go:build linux

package gitstore

import (
	"os"
	"path"

	"golang.org/x/sys/unix"
)

// whiteout writes the overlay's mark of a deleted path: a character device
// 0/0, created in its parent directory opened through root.
func whiteout(root *os.Root, rel string) error {
	dir, err := root.Open(path.Dir(rel))
	if err != nil {
		return err
	}
	defer dir.Close()
	return unix.Mknodat(int(dir.Fd()), path.Base(rel), unix.S_IFCHR|0o600, 0)
}

// markOpaque tells the overlay not to merge a directory with the lower
// layer's entry of that name (the box mounts it with userxattr).
func markOpaque(root *os.Root, rel string) error {
	dir, err := root.Open(rel)
	if err != nil {
		return err
	}
	defer dir.Close()
	return unix.Fsetxattr(int(dir.Fd()), "user.overlay.opaque", []byte("y"), 0)
}
