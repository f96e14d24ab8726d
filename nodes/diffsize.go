package nodes

import (
	"bufio"
	"bytes"
	"io"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/utils/diff"
	"github.com/sergi/go-diff/diffmatchpatch"

	"github.com/sandgate/sandgate/sandbox"
)

const (
	// binarySniff is how much of a file git looks at for a NUL byte to
	// call it binary.
	binarySniff = 8000
	// maxLineDiff bounds the files diffed line by line in memory; a larger
	// text file counts all its lines, as if rewritten.
	maxLineDiff = 1 << 20
)

// fileSize is what one changed file adds to the diff.
type fileSize struct {
	name     string
	add, del int
	bytes    int64
	binary   bool
}

func (f fileSize) lines() int { return f.add + f.del }

// opener streams one side of a file; nil is an absent side.
type opener func() (io.ReadCloser, error)

// measureFile sizes one change against its base blob, streaming: a binary
// file counts as a file and its bytes (a line count would call it
// empty), a text file counts its changed lines. The base blob is found by
// reading only the trees on the change's path.
func measureFile(objs *objectStore, base plumbing.Hash, c sandbox.Change) (fileSize, error) {
	f := fileSize{name: c.Path, bytes: c.Size}
	var oldSide, newSide opener
	var oldSize int64
	e, ok, err := objs.entry(base, c.Path)
	if err != nil {
		return f, err
	}
	if ok && e.Mode.IsFile() {
		oldSide = objs.blobOpener(e.Hash)
		if oldSize, err = objs.size(e.Hash); err != nil {
			return f, err
		}
	}
	if c.Deleted {
		f.bytes = oldSize
	} else {
		newSide = c.Open
	}
	for _, side := range []opener{oldSide, newSide} {
		head, err := readSide(side, binarySniff)
		if err != nil {
			return f, err
		}
		f.binary = f.binary || bytes.IndexByte(head, 0) >= 0
	}
	if f.binary {
		return f, nil
	}
	if oldSize > maxLineDiff || (!c.Deleted && c.Size > maxLineDiff) {
		var err error
		if f.del, err = countSideLines(oldSide); err == nil {
			f.add, err = countSideLines(newSide)
		}
		return f, err
	}
	a, err := readSide(oldSide, maxLineDiff)
	if err != nil {
		return f, err
	}
	b, err := readSide(newSide, maxLineDiff)
	if err != nil {
		return f, err
	}
	for _, d := range diff.Do(string(a), string(b)) {
		switch d.Type {
		case diffmatchpatch.DiffInsert:
			f.add += countLines(d.Text)
		case diffmatchpatch.DiffDelete:
			f.del += countLines(d.Text)
		}
	}
	return f, nil
}

// readSide reads at most n bytes of a side.
func readSide(side opener, n int64) ([]byte, error) {
	if side == nil {
		return nil, nil
	}
	r, err := side()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return io.ReadAll(io.LimitReader(r, n))
}

// countSideLines counts a side's lines, streaming.
func countSideLines(side opener) (int, error) {
	if side == nil {
		return 0, nil
	}
	r, err := side()
	if err != nil {
		return 0, err
	}
	defer r.Close()
	br := bufio.NewReaderSize(r, 64<<10)
	n, last := 0, byte('\n')
	for {
		chunk, err := br.ReadSlice('\n')
		if len(chunk) > 0 {
			last = chunk[len(chunk)-1]
			n += bytes.Count(chunk, []byte{'\n'})
		}
		if err == io.EOF {
			break
		}
		if err != nil && err != bufio.ErrBufferFull {
			return 0, err
		}
	}
	if last != '\n' {
		n++
	}
	return n, nil
}

func countLines(text string) int {
	n := strings.Count(text, "\n")
	if text != "" && !strings.HasSuffix(text, "\n") {
		n++
	}
	return n
}
