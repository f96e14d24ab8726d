//go:build darwin

package gate

import (
	"errors"
	"io/fs"
	"syscall"
)

// stampOf reads an entry's inode, size and change time, as on Linux (the
// field is named Ctimespec here). No box runs on macOS, so this only keeps
// the package building there.
func stampOf(info fs.FileInfo) (stamp, error) {
	st, _ := info.Sys().(*syscall.Stat_t)
	if st == nil {
		return stamp{}, errors.New("no inode data")
	}
	return stamp{ino: st.Ino, size: uint64(st.Size), ctime: syscall.TimespecToNsec(st.Ctimespec), mode: info.Mode()}, nil
}
