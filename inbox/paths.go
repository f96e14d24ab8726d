package inbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"syscall"
)

func itoa(n int) string { return strconv.Itoa(n) }

// validName accepts one plain path element: a run id, queue entry id or
// node name. Anything with a separator, a leading dot (so "." and ".."),
// a backslash or a control character is refused before it reaches the
// file system.
func validName(s string) bool {
	if s == "" || len(s) > 200 || s[0] == '.' {
		return false
	}
	for _, c := range s {
		ok := c == '-' || c == '_' || c == '.' || c == '+' || c == '@' ||
			(c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
		if !ok {
			return false
		}
	}
	return true
}

// validRel accepts a relative slash path of valid names (a file inside a
// run directory, e.g. nodes/test/1/test.log).
func validRel(p string) bool {
	if p == "" || len(p) > 1000 {
		return false
	}
	for _, el := range strings.Split(p, "/") {
		if !validName(el) {
			return false
		}
	}
	return true
}

var errBadName = errors.New("invalid name")

// openDir opens dir/name as a root of its own. os.Root refuses names that
// leave dir, also through a symlink, so a run id can only ever name a
// directory inside its runs directory.
func openDir(dir, name string) (*os.Root, error) {
	if !validName(name) {
		return nil, errBadName
	}
	parent, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer parent.Close()
	return parent.OpenRoot(name)
}

// openRegular opens a regular file inside r without blocking: a run
// directory may be on shared storage, and opening a FIFO for reading
// would wait for a writer forever (O_NONBLOCK makes it return at once, and
// then the mode check refuses it). Devices and directories are refused too.
func openRegular(r *os.Root, name string) (*os.File, fs.FileInfo, error) {
	if !validRel(name) {
		return nil, nil, errBadName
	}
	f, err := r.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, err
	}
	st, err := f.Stat()
	if err == nil && !st.Mode().IsRegular() {
		err = fmt.Errorf("%s: not a regular file: %w", name, fs.ErrInvalid)
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, st, nil
}

// readCapped reads at most limit bytes of a regular file inside r and
// reports whether it was cut.
func readCapped(r *os.Root, name string, limit int64) ([]byte, bool, error) {
	f, st, err := openRegular(r, name)
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	b := make([]byte, min(st.Size(), limit))
	n, err := f.ReadAt(b, 0)
	if err != nil && n < len(b) {
		return nil, false, err
	}
	return b[:n], st.Size() > limit, nil
}

// readTail reads at most the last limit bytes of a regular file inside r,
// and how many bytes come before them.
func readTail(r *os.Root, name string, limit int64) ([]byte, int64, error) {
	f, st, err := openRegular(r, name)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	from := max(st.Size()-limit, 0)
	b := make([]byte, st.Size()-from)
	n, err := f.ReadAt(b, from)
	if err != nil && n < len(b) {
		return nil, 0, err
	}
	return b[:n], from, nil
}
