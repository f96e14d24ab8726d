//go:build unix && !linux

package sandbox

import (
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// openPackDir opens objects/pack, refusing a symlink in its place.
func openPackDir(objects string) (*os.File, error) {
	return os.OpenFile(filepath.Join(objects, "pack"), os.O_RDONLY|unix.O_NOFOLLOW|unix.O_DIRECTORY, 0)
}
