//go:build !linux && !darwin

package gate

import (
	"fmt"
	"io/fs"
	"runtime"
)

// stampOf fails where there is no inode to stamp: the gate's fingerprint
// needs one, and no box runs here anyway.
func stampOf(fs.FileInfo) (stamp, error) {
	return stamp{}, fmt.Errorf("inode stamps are not supported on GOOS=%s", runtime.GOOS)
}
