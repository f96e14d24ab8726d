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
