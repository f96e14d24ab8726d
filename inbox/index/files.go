package index

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// ValidName accepts one plain path element: a run id, queue entry id or
// node name. Anything with a separator, a leading dot (so "." and ".."),
// a backslash or a control character is refused before it reaches the
// file system.
func ValidName(s string) bool {
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

// ValidRel accepts a relative slash path of valid names (a file inside a
// run directory, e.g. nodes/test/1/test.log).
func ValidRel(p string) bool {
	if p == "" || len(p) > 1000 {
		return false
	}
	for _, el := range strings.Split(p, "/") {
		if !ValidName(el) {
			return false
		}
	}
	return true
}

// OpenRegular opens a regular file inside r without blocking: a run
// directory may be on shared storage, and opening a FIFO for reading
// would wait for a writer forever (O_NONBLOCK makes it return at once, and
// then the mode check refuses it). Devices and directories are refused too.
func OpenRegular(r *os.Root, name string) (*os.File, fs.FileInfo, error) {
	if !ValidRel(name) {
		return nil, nil, ErrBadName
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

// ReadCapped reads at most limit bytes of a regular file inside r and
// reports whether it was cut.
func ReadCapped(r *os.Root, name string, limit int64) ([]byte, bool, error) {
	f, st, err := OpenRegular(r, name)
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

// ErrBadName is the error for a name or path ValidName or ValidRel refuse.
var ErrBadName = errors.New("invalid name")

func itoa(n int) string { return strconv.Itoa(n) }
