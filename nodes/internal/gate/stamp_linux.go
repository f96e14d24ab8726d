//go:build linux

package gate

import (
	"errors"
	"io/fs"
	"syscall"
)

// stampOf reads an entry's inode, size and change time: the ctime moves on
// every write or chmod, and cannot be set back from inside the box.
func stampOf(info fs.FileInfo) (stamp, error) {
	st, _ := info.Sys().(*syscall.Stat_t)
	if st == nil {
		return stamp{}, errors.New("no inode data")
	}
	return stamp{ino: st.Ino, size: uint64(st.Size), ctime: st.Ctim.Nano(), mode: info.Mode()}, nil
}
