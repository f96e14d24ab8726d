//go:build linux

package sandbox

import (
	"fmt"
	"io/fs"
	"os"

	"golang.org/x/sys/unix"
)

// The harness reads the workspace while commands in the box may still be
// changing it. Every path below a layer root is therefore resolved with
// openat2 beneath the root, refusing symbolic links and mount crossings
// on the way (a directory swapped for a link cannot lead the harness out
// of the layer), and nothing is opened in a way that can block: regular
// files and directories are opened O_NONBLOCK, everything else only as
// O_PATH, so a FIFO or device planted between a stat and an open is never
// waited on.
const resolveBeneath = unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS | unix.RESOLVE_NO_XDEV

// openBeneath opens rel (slash or OS separated, never absolute) below root.
func openBeneath(root, rel string, flags uint64) (int, error) {
	rfd, err := unix.Open(root, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, &fs.PathError{Op: "open", Path: root, Err: err}
	}
	defer unix.Close(rfd)
	if rel == "" || rel == "." {
		return unix.Openat2(rfd, ".", &unix.OpenHow{Flags: flags | unix.O_CLOEXEC, Resolve: resolveBeneath})
	}
	for {
		fd, err := unix.Openat2(rfd, rel, &unix.OpenHow{Flags: flags | unix.O_CLOEXEC, Resolve: resolveBeneath})
		if err == unix.EAGAIN || err == unix.EINTR {
			continue // a rename raced the lookup; openat2 asks for a retry
		}
		return fd, err
	}
}

// node is what a path below a layer root is, read without following links.
type node struct {
	missing bool
	st      unix.Stat_t
	link    string
}

func (n node) isDir() bool  { return !n.missing && n.st.Mode&unix.S_IFMT == unix.S_IFDIR }
func (n node) isReg() bool  { return !n.missing && n.st.Mode&unix.S_IFMT == unix.S_IFREG }
func (n node) isLink() bool { return !n.missing && n.st.Mode&unix.S_IFMT == unix.S_IFLNK }
func (n node) whiteout() bool {
	return !n.missing && n.st.Mode&unix.S_IFMT == unix.S_IFCHR && n.st.Rdev == 0
}
func (n node) exec() bool           { return n.st.Mode&0o100 != 0 }
func (n node) special() bool        { return !n.missing && !n.isDir() && !n.isReg() && !n.isLink() }
func (n node) sameFile(o node) bool { return n.st.Dev == o.st.Dev && n.st.Ino == o.st.Ino }

// statBeneath reads what rel is below root. A path whose parent is gone,
// is not a directory or is a link does not exist in that layer.
func statBeneath(root, rel string) (node, error) {
	fd, err := openBeneath(root, rel, unix.O_PATH|unix.O_NOFOLLOW)
	switch {
	case err == unix.ENOENT || err == unix.ENOTDIR || err == unix.ELOOP:
		return node{missing: true}, nil
	case err != nil:
		return node{}, fmt.Errorf("%s: %w", rel, err)
	}
	defer unix.Close(fd)
	var n node
	if err := unix.Fstat(fd, &n.st); err != nil {
		return node{}, fmt.Errorf("%s: %w", rel, err)
	}
	if n.isLink() {
		buf := make([]byte, 4096)
		k, err := unix.Readlinkat(fd, "", buf)
		if err != nil {
			return node{}, fmt.Errorf("%s: read link: %w", rel, err)
		}
		n.link = string(buf[:k])
	}
	return n, nil
}

// openFileBeneath opens the regular file rel below root for reading, and
// only if it is still the very file that was listed (same device and
// inode): anything swapped in since is refused with ErrChanged.
func openFileBeneath(root, rel string, want node) (*os.File, error) {
	fd, err := openBeneath(root, rel, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_NOFOLLOW|unix.O_NOCTTY)
	if err != nil {
		if err == unix.ENOENT || err == unix.ENOTDIR || err == unix.ELOOP || err == unix.ENXIO {
			return nil, fmt.Errorf("%s: %w (%w)", rel, ErrChanged, err)
		}
		return nil, fmt.Errorf("%s: %w", rel, err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("%s: %w", rel, err)
	}
	got := node{st: st}
	if !got.isReg() || !got.sameFile(want) {
		unix.Close(fd)
		return nil, fmt.Errorf("%s: %w (no longer the regular file that was listed)", rel, ErrChanged)
	}
	return os.NewFile(uintptr(fd), rel), nil
}

// readDirBeneath lists the names in directory rel below root.
func readDirBeneath(root, rel string) ([]string, error) {
	fd, err := openBeneath(root, rel, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NONBLOCK|unix.O_NOFOLLOW)
	if err == unix.ENOENT || err == unix.ENOTDIR || err == unix.ELOOP {
		return nil, nil // replaced while listing: its parent's entry says what it is now
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", rel, err)
	}
	f := os.NewFile(uintptr(fd), rel)
	defer f.Close()
	return f.Readdirnames(-1)
}

// opaqueBeneath reports an overlayfs opaque directory (it hides the lower
// one). The box mounts with userxattr, so the marker is in the user
// namespace.
func opaqueBeneath(root, rel string) bool {
	fd, err := openBeneath(root, rel, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NONBLOCK|unix.O_NOFOLLOW)
	if err != nil {
		return false
	}
	defer unix.Close(fd)
	buf := make([]byte, 4)
	for _, name := range []string{"user.overlay.opaque", "trusted.overlay.opaque"} {
		n, err := unix.Fgetxattr(fd, name, buf)
		if err == nil && n > 0 && buf[0] == 'y' {
			return true
		}
	}
	return false
}

// lstatBeneath is the lstat of rel below root reached through directories
// only, or nil when there is no such entry (a component is missing, not
// a directory, or a symlink).
func lstatBeneath(root, rel string) (*unix.Stat_t, error) {
	n, err := statBeneath(root, rel)
	if err != nil || n.missing {
		return nil, err
	}
	return &n.st, nil
}
