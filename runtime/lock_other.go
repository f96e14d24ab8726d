//go:build !unix

package runtime

import (
	"fmt"
	"os"
)

// lockRun opens the run directory without locking it: off Unix there is
// no flock, and a run's nodes need Linux anyway; the library still builds
// so blueprints can be validated and journals read there.
func lockRun(dir string) (*os.File, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, fmt.Errorf("lock run: %w", err)
	}
	return f, nil
}
