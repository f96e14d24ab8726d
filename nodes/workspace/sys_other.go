//go:build !unix

package workspace

import (
	"fmt"
	"os"
	"runtime"
)

// errNoPOSIX: off Unix the warm cache neither locks nor reads what a box
// wrote (it could not refuse a symlink or a FIFO); boxes do not run there.
var errNoPOSIX = fmt.Errorf("the warm cache's file locks and O_NOFOLLOW are not supported on GOOS=%s", runtime.GOOS)

func tryLock(*os.File) (bool, error)       { return false, errNoPOSIX }
func openBoxFile(string) (*os.File, error) { return nil, errNoPOSIX }
