//go:build linux

package sandbox

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"strings"
	"sync"
)

// source is where a changed file's content lives, and the file it was
// when listed. Copies of a Change share it.
type source struct {
	root, rel string
	want      node
	mu        sync.Mutex
	sum       []byte // SHA-256 of the first complete read
}

// pin records the digest of a complete read, or checks a later one
// against it: a Change yields the same bytes every time, or an error.
func (s *source) pin(sum []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sum == nil {
		s.sum = sum
		return nil
	}
	if !bytes.Equal(s.sum, sum) {
		return fmt.Errorf("%s: %w (the bytes differ from an earlier read)", s.rel, ErrChanged)
	}
	return nil
}

// Open streams the change's content as git stores it: a file's bytes or
// a link's target. The file is reopened without following links or
// blocking, and refused unless it is still the regular file that was
// listed; the reader yields exactly Size bytes or fails with ErrChanged.
//
// The first complete read of a Change pins its content: every later
// complete read of the same Change (or a copy) fails with ErrChanged if
// the bytes differ, so what was checked is what gets used.
func (c Change) Open() (io.ReadCloser, error) {
	switch {
	case c.Deleted:
		return nil, fmt.Errorf("%s: deleted, it has no content", c.Path)
	case c.Mode&os.ModeSymlink != 0:
		return io.NopCloser(strings.NewReader(c.Link)), nil
	case c.src == nil:
		return nil, fmt.Errorf("%s: no content (not listed by Changes)", c.Path)
	}
	f, err := openFileBeneath(c.src.root, c.src.rel, c.src.want)
	if err != nil {
		return nil, err
	}
	return &contentReader{f: f, left: c.Size, size: c.Size, h: sha256.New(), src: c.src}, nil
}

// contentReader yields exactly the listed size, hashing as it goes.
type contentReader struct {
	f          *os.File
	left, size int64
	h          hash.Hash
	src        *source
	done       bool
}

func (r *contentReader) Read(p []byte) (int, error) {
	if r.done {
		return 0, io.EOF
	}
	if r.left == 0 {
		return 0, r.finish()
	}
	if int64(len(p)) > r.left {
		p = p[:r.left]
	}
	n, err := r.f.Read(p)
	r.h.Write(p[:n])
	r.left -= int64(n)
	if err == io.EOF && r.left > 0 {
		return n, fmt.Errorf("%s: %w (shrank below the listed %d bytes)", r.src.rel, ErrChanged, r.size)
	}
	if err == io.EOF {
		err = nil
	}
	return n, err
}

// finish checks that the file ends at the listed size and pins the digest.
func (r *contentReader) finish() error {
	var one [1]byte
	n, err := r.f.Read(one[:])
	if n > 0 {
		return fmt.Errorf("%s: %w (grew past the listed %d bytes)", r.src.rel, ErrChanged, r.size)
	}
	if err != nil && err != io.EOF {
		return err
	}
	if err := r.src.pin(r.h.Sum(nil)); err != nil {
		return err
	}
	r.done = true
	return io.EOF
}

func (r *contentReader) Close() error { return r.f.Close() }

// sameBytes compares two regular files of equal listed size, streaming.
func sameBytes(a, b located, rel string) (bool, error) {
	fa, err := openFileBeneath(a.root, rel, a.node)
	if err != nil {
		return false, err
	}
	defer fa.Close()
	fb, err := openFileBeneath(b.root, rel, b.node)
	if err != nil {
		return false, err
	}
	defer fb.Close()
	ra, rb := io.LimitReader(fa, a.st.Size+1), io.LimitReader(fb, b.st.Size+1)
	bufA, bufB := make([]byte, 64<<10), make([]byte, 64<<10)
	for {
		na, errA := io.ReadFull(ra, bufA)
		nb, errB := io.ReadFull(rb, bufB)
		if na != nb || !bytes.Equal(bufA[:na], bufB[:nb]) {
			return false, nil
		}
		endA, endB := isEnd(errA), isEnd(errB)
		switch {
		case errA != nil && !endA:
			return false, errA
		case errB != nil && !endB:
			return false, errB
		case endA || endB:
			return endA && endB, nil
		}
	}
}

func isEnd(err error) bool { return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) }
