//go:build linux

package sandbox

import (
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// openPackDir opens objects/pack with no symlink anywhere on the path
// (the object directory's real path was resolved before; a component
// swapped for a symlink since is refused, not followed).
func openPackDir(objects string) (*os.File, error) {
	fd, err := unix.Openat2(unix.AT_FDCWD, filepath.Join(objects, "pack"), &unix.OpenHow{
		Flags: unix.O_RDONLY | unix.O_DIRECTORY | unix.O_CLOEXEC, Resolve: unix.RESOLVE_NO_SYMLINKS})
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), filepath.Join(objects, "pack")), nil
}
