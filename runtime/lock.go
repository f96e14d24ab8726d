//go:build unix

package runtime

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// lockRun takes the run directory's exclusive lock for as long as one
// execution carries the run: two answers (a double click), an answer and
// a resume, or a resume of a live run would otherwise both journal and
// run nodes on one workspace. The lock is an flock on the directory
// itself, so it adds no file and dies with the process; the descriptor is
// close-on-exec, so no node's child keeps it.
func lockRun(dir string) (*os.File, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, fmt.Errorf("lock run: %w", err)
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("run %s: %w (an answer or a resume): wait for it", filepath.Base(dir), ErrRunBusy)
		}
		return nil, fmt.Errorf("lock run %s: %w", dir, err)
	}
	return f, nil
}
