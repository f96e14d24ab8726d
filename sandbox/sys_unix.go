//go:build unix

package sandbox

import (
	"errors"
	"os"
	"os/exec"
	"syscall"

	"golang.org/x/sys/unix"
)

// The cache's few POSIX calls, named here so that the files that use
// them build on every OS; sys_other.go makes each one fail off Unix.

// sysStat is what lstat and fstat fill in.
type sysStat = unix.Stat_t

const (
	lockSH = unix.LOCK_SH
	lockEX = unix.LOCK_EX
	lockNB = unix.LOCK_NB
	sIFMT  = unix.S_IFMT
	sIFREG = unix.S_IFREG
	sIFDIR = unix.S_IFDIR
)

func flock(f *os.File, how int) error         { return unix.Flock(int(f.Fd()), how) }
func lstat(p string, st *sysStat) error       { return unix.Lstat(p, st) }
func fstat(f *os.File, st *sysStat) error     { return unix.Fstat(int(f.Fd()), st) }
func openNoFollow(p string) (*os.File, error) { return os.OpenFile(p, os.O_RDONLY|unix.O_NOFOLLOW, 0) }

// lstatAt is fstatat(dir, name) without following a symlink.
func lstatAt(dir *os.File, name string, st *sysStat) error {
	return unix.Fstatat(int(dir.Fd()), name, st, unix.AT_SYMLINK_NOFOLLOW)
}

// openAtNoFollow opens name in dir for reading; errSymlink when it is a
// symlink.
func openAtNoFollow(dir *os.File, name string) (*os.File, error) {
	fd, err := unix.Openat(int(dir.Fd()), name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.ELOOP) {
		return nil, errSymlink
	}
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), name), nil
}

// freeBytes is the space an unprivileged writer has left on dir's
// filesystem; ok false when it cannot be read.
func freeBytes(dir string) (n int64, ok bool) {
	var st unix.Statfs_t
	if unix.Statfs(dir, &st) != nil {
		return 0, false
	}
	return int64(st.Bavail) * int64(st.Bsize), true
}

// killedByFileLimit reports whether a command died of SIGXFSZ (its
// RLIMIT_FSIZE).
func killedByFileLimit(err error) bool {
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		return false
	}
	ws, ok := ee.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == syscall.SIGXFSZ
}
