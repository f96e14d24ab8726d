package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// originXattr is overlayfs's record of the lower directory an upper one
// was copied up from; the box mounts with userxattr.
const originXattr = "user.overlay.origin"

// markCopiedUp gives every directory of a seeded upper layer that also
// exists as a directory in lower the empty origin record overlayfs writes
// for "copied up, origin unknown". A seed is written by hand, not by a
// copy-up, so its merged directories lack one, and overlayfs adds one on
// the first lookup of each (ovl_fix_origin), marking the parent impure:
// two xattr writes that move the directories' change time while a command
// only reads. Whoever watches the layer for writes would take that lookup
// for one.
func markCopiedUp(upper, lower string) error {
	return filepath.WalkDir(upper, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() || p == upper {
			return err
		}
		rel, err := filepath.Rel(upper, p)
		if err != nil {
			return err
		}
		st, err := lstatBeneath(lower, rel)
		if err != nil || st == nil || st.Mode&unix.S_IFMT != unix.S_IFDIR {
			return err // no merge with a lower directory: nothing to look up
		}
		if _, err := unix.Lgetxattr(p, originXattr, nil); err == nil {
			return nil
		} else if !errors.Is(err, unix.ENODATA) {
			return fmt.Errorf("read %s's overlay origin: %w", p, err)
		}
		if err := unix.Lsetxattr(p, originXattr, nil, 0); err != nil {
			return fmt.Errorf("mark %s copied up: %w", p, err)
		}
		return nil
	})
}
