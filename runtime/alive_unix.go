//go:build unix

package runtime

import (
	"errors"
	"syscall"
)

// processExists: signal 0 checks without signalling; EPERM means it
// exists under another user.
func processExists(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
