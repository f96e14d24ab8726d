package gitstore

import (
	"bufio"
	"bytes"
	"io"
	"strings"

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

// FileSize is what one changed file adds to the diff.
type FileSize struct {
	Name     string
	Add, Del int
	Bytes    int64
	Binary   bool
}

// Lines is the lines added plus deleted.
func (f FileSize) Lines() int { return f.Add + f.Del }

// opener streams one side of a file; nil is an absent side.
type opener func() (io.ReadCloser, error)

// Measure sizes one change against its base blob in the base tree,
// streaming: a binary file counts as a file and its bytes (a line count
// would call it empty), a text file counts its changed lines, a long line
// as several (see LongLine). The base blob is found by
// reading only the trees on the change's path.
func (p *Repo) Measure(c sandbox.Change) (FileSize, error) {
	objs, base := p.objs, p.baseTree
	f := FileSize{Name: c.Path, Bytes: c.Size}
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
		f.Bytes = oldSize
	} else {
		newSide = c.Open
	}
	for _, side := range []opener{oldSide, newSide} {
		head, err := readSide(side, binarySniff)
		if err != nil {
			return f, err
		}
		f.Binary = f.Binary || bytes.IndexByte(head, 0) >= 0
	}
	if f.Binary {
		return f, nil
	}
	if oldSize > maxLineDiff || (!c.Deleted && c.Size > maxLineDiff) {
		var err error
		if f.Del, err = countSideLines(oldSide); err == nil {
			f.Add, err = countSideLines(newSide)
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
			f.Add += countLines(d.Text)
		case diffmatchpatch.DiffDelete:
			f.Del += countLines(d.Text)
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

// LongLine is the length from which a line counts as more than one
// line: one line per LongLine bytes begun. A minified file, or any amount
// of data written on one line, is that much change.
const LongLine = 4 << 10

func lineWeight(n int) int { return max(1, (n+LongLine-1)/LongLine) }

// countSideLines counts a side's lines (see LongLine), streaming.
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
	n, cur, open := 0, 0, false
	for {
		chunk, err := br.ReadSlice('\n')
		if i := bytes.IndexByte(chunk, '\n'); i >= 0 {
			n += lineWeight(cur + i)
			cur, open = 0, false
		} else if len(chunk) > 0 {
			cur, open = cur+len(chunk), true
		}
		if err == io.EOF {
			break
		}
		if err != nil && err != bufio.ErrBufferFull {
			return 0, err
		}
	}
	if open {
		n += lineWeight(cur)
	}
	return n, nil
}

// countLines counts the lines of a diff's text (see LongLine).
func countLines(text string) int {
	n := 0
	for text != "" {
		line, rest, _ := strings.Cut(text, "\n")
		n += lineWeight(len(line))
		text = rest
	}
	return n
}
