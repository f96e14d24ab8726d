//go:build !linux

package gitstore

import (
	"errors"
	"os"
)

// errNoLayer: overlay layers exist only where boxes run, on Linux.
var errNoLayer = errors.New("overlay layers are written on Linux only")

func whiteout(*os.Root, string) error { return errNoLayer }

func markOpaque(*os.Root, string) error { return errNoLayer }
