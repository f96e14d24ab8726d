//go:build unix

package main

import (
	"io/fs"
	"syscall"
)

// diskBytes is the space the entry at p takes on disk (a sparse disk
// image counts what it holds, not its apparent size).
func diskBytes(p string, _ fs.DirEntry) int64 {
	var st syscall.Stat_t
	if syscall.Lstat(p, &st) != nil {
		return 0
	}
	return st.Blocks * 512
}

// ownGroup puts a child in a process group of its own, so a ^C to the
// server does not stop it.
func ownGroup() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }
