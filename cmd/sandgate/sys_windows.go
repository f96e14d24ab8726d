//go:build windows

package main

import (
	"io/fs"
	"syscall"
)

// diskBytes is the entry's apparent size: Windows has no block count in
// its stat, and prune only reports this figure.
func diskBytes(_ string, d fs.DirEntry) int64 {
	if info, err := d.Info(); err == nil && !info.IsDir() {
		return info.Size()
	}
	return 0
}

// ownGroup puts a child in a process group of its own, as Setpgid does.
func ownGroup() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{CreationFlags: syscall.CREATE_NEW_PROCESS_GROUP}
}
