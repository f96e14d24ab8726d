//go:build !linux

package nodes

import (
	"errors"
	"io/fs"
)

// stampOf fails off Linux: gates stamp a box's workspace, and no box runs
// there (sandbox.Start refuses), so this is never reached in a working
// run; failing keeps a gate from passing on weaker evidence.
func stampOf(fs.FileInfo) (stamp, error) {
	return stamp{}, errors.New("workspace stamps need Linux")
}
