//go:build !unix

package reviewqueue

import (
	"fmt"
	"runtime"
)

// lockEntry fails off Unix: without flock two decisions on one entry
// could both land, so none is taken at all.
func lockEntry(path string) (func(), error) {
	return nil, fmt.Errorf("lock review entry %s: file locks are not supported on GOOS=%s", path, runtime.GOOS)
}
