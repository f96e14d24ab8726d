//go:build !unix

package sandbox

import (
	"fmt"
	"os"
	"runtime"
)

// errNoPOSIX is what the cache's POSIX calls return off Unix: without
// flock a lease cannot hold a snapshot, and without O_NOFOLLOW and stat
// a copy cannot refuse a symlink or another user's file, so each fails
// at the call rather than run unlocked or unchecked.
var errNoPOSIX = fmt.Errorf("%w: file locks, O_NOFOLLOW and stat are not supported on GOOS=%s", ErrUnavailable, runtime.GOOS)

// sysStat has the fields the cache reads; off Unix it is never filled.
type sysStat struct {
	Mode   uint32
	Nlink  uint64
	Uid    uint32
	Size   int64
	Blocks int64
}

const (
	lockSH = 1
	lockEX = 2
	lockNB = 4
	sIFMT  = 0o170000
	sIFREG = 0o100000
	sIFDIR = 0o040000
)

func flock(*os.File, int) error                         { return errNoPOSIX }
func lstat(string, *sysStat) error                      { return errNoPOSIX }
func fstat(*os.File, *sysStat) error                    { return errNoPOSIX }
func openNoFollow(string) (*os.File, error)             { return nil, errNoPOSIX }
func lstatAt(*os.File, string, *sysStat) error          { return errNoPOSIX }
func openAtNoFollow(*os.File, string) (*os.File, error) { return nil, errNoPOSIX }
func freeBytes(string) (int64, bool)                    { return 0, false }
func killedByFileLimit(error) bool                      { return false }
func openPackDir(string) (*os.File, error)              { return nil, errNoPOSIX }
