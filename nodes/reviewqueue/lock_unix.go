//go:build unix

package reviewqueue

import (
	"fmt"
	"os"
	"syscall"
)

// lockEntry takes an exclusive flock on path, waiting for another
// decision on the same entry to finish; the lock dies with the process.
func lockEntry(path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR|syscall.O_NOFOLLOW, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock review entry: %w", err)
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("lock review entry %s: %w", path, err)
	}
	return func() { f.Close() }, nil
}
