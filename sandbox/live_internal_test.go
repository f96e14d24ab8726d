package sandbox

import (
	"bytes"
	"strings"
	"testing"
)

// TestLiveQueueOrderAndCopies: Live gets pushed chunks and written pieces
// in their order; a piece given to Write is copied (the writer reuses its
// buffer), and what passes liveMax unwritten is left out with a note.
func TestLiveQueueOrderAndCopies(t *testing.T) {
	var out bytes.Buffer
	q := &liveQueue{wake: make(chan struct{}, 1), done: make(chan struct{})} // drained below, by hand
	p := []byte("ab")
	q.Write(p)
	p[0], p[1] = 'c', 'd'
	q.Write(p)
	q.push([]byte("ef"))
	q.Write([]byte("gh"))
	q.push(bytes.Repeat([]byte("x"), liveMax)) // past liveMax: left out
	close(q.wake)
	q.drain(&out)
	if got := out.String(); !strings.HasPrefix(got, "abcdefgh\n[sandgate: ") || strings.Contains(got, "x") {
		t.Fatalf("live got %q", got)
	}
}

// gapRecorder is a Live that is a Gapper, and writes "|" where told of
// a gap.
type gapRecorder struct{ bytes.Buffer }

func (g *gapRecorder) Gap() error { return g.WriteByte('|') }

// TestLiveQueueReportsGaps: a Live that is a Gapper is told of a piece
// left out between the bytes before it and those after it, and of one at
// the end before the note; without a drop it is told nothing.
func TestLiveQueueReportsGaps(t *testing.T) {
	var out gapRecorder
	q := &liveQueue{wake: make(chan struct{}, 1), done: make(chan struct{})} // drained below, by hand
	q.Write([]byte("ab"))
	q.push(bytes.Repeat([]byte("x"), liveMax)) // past liveMax: left out
	q.push([]byte("cd"))
	q.flush(&out) // the consumer caught up: room again
	q.Write([]byte("ef"))
	q.push(bytes.Repeat([]byte("y"), liveMax))
	close(q.wake)
	q.drain(&out)
	if got := out.String(); !strings.HasPrefix(got, "ab|cdef|\n[sandgate: ") || strings.Contains(got, "xx") || strings.Contains(got, "yy") {
		t.Fatalf("live got %q", got)
	}
	out.Reset()
	q = newLiveQueue(&out)
	q.Write([]byte("ab"))
	q.push([]byte("cd"))
	q.close()
	if out.String() != "abcd" {
		t.Fatalf("live without a drop got %q", out.String())
	}
}
