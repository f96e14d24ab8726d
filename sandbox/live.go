package sandbox

import (
	"bytes"
	"fmt"
	"io"
	"sync"
	"time"
)

// LiveEvery is how often init sends on what a command with Command.Live
// has written since its last chunk: the delay before a running command's
// output reaches the harness.
const LiveEvery = 250 * time.Millisecond

// liveQueue carries a command's output chunks to Command.Live on a
// goroutine of its own, so the box's reader never waits for a slow
// writer. It holds at most liveMax bytes; what arrives past that is left
// out of Live (the command's Result still has all of it), a Live that is
// a Gapper is told where, and a note at the end says how much.
type liveQueue struct {
	mu      sync.Mutex
	wake    chan struct{}
	done    chan struct{}
	parts   [][]byte
	gaps    []bool // gaps[i]: output was left out just before parts[i]
	held    int
	tail    bool // the last part is the queue's own copy, for Write to add to
	dropped int
	gap     bool // output was left out after the last part queued
	closed  bool
}

// Gapper is a Command.Live that must know where its output has a hole:
// the queue calls Gap between the bytes before a left-out piece and
// those after it (and before its closing note when the hole is at the
// end). A redacting stream (secrets.Redactor.Stream) is one, so that a
// credential cut by the hole is not written in two halves.
type Gapper interface {
	Gap() error
}

const liveMax = 4 << 20

// smallChunk is the size under which the harness copies an output chunk
// rather than keep it: only a chunk sent on a tick of LiveEvery, or by a
// compromised init, is that small.
const smallChunk = 4 << 10

func newLiveQueue(w io.Writer) *liveQueue {
	q := &liveQueue{wake: make(chan struct{}, 1), done: make(chan struct{})}
	go q.drain(w)
	return q
}

// push queues b without blocking, and without copying it unless it is
// small (see smallChunk): nothing may change b afterwards (the harness's
// output chunks, which no one does).
func (q *liveQueue) push(b []byte) { q.queue(b, len(b) < smallChunk) }

// Write queues a copy of p, for a writer of the command's own output.
func (q *liveQueue) Write(p []byte) (int, error) {
	q.queue(p, true)
	return len(p), nil
}

func (q *liveQueue) queue(b []byte, copied bool) {
	if q == nil || len(b) == 0 {
		return
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed || q.held+len(b) > liveMax {
		q.dropped += len(b)
		q.gap = true
		return
	}
	switch {
	case q.gap:
		q.parts, q.gaps, q.tail = append(q.parts, bytes.Clone(b)), append(q.gaps, true), true
		q.gap = false
	case !copied:
		q.parts, q.gaps, q.tail = append(q.parts, b), append(q.gaps, false), false
	case q.tail:
		last := len(q.parts) - 1
		q.parts[last] = append(q.parts[last], b...)
	default:
		q.parts, q.gaps, q.tail = append(q.parts, bytes.Clone(b)), append(q.gaps, false), true
	}
	q.held += len(b)
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// close ends the queue once what it holds is written, and waits for that.
func (q *liveQueue) close() {
	if q == nil {
		return
	}
	q.mu.Lock()
	if !q.closed {
		q.closed = true
		close(q.wake)
	}
	q.mu.Unlock()
	<-q.done
}

func (q *liveQueue) drain(w io.Writer) {
	defer close(q.done)
	for range q.wake {
		q.flush(w)
	}
	q.flush(w)
	q.mu.Lock()
	dropped, atEnd := q.dropped, q.gap
	q.mu.Unlock()
	if dropped > 0 {
		if atEnd {
			gap(w)
		}
		_, _ = fmt.Fprintf(w, "\n[sandgate: %d bytes of output not shown live]\n", dropped)
	}
}

func (q *liveQueue) flush(w io.Writer) {
	q.mu.Lock()
	parts, gaps := q.parts, q.gaps
	q.parts, q.gaps, q.held, q.tail = nil, nil, 0, false
	q.mu.Unlock()
	for i, b := range parts {
		if gaps[i] {
			gap(w)
		}
		_, _ = w.Write(b)
	}
}

// gap tells w, if it is a Gapper, that output was left out here.
func gap(w io.Writer) {
	if g, ok := w.(Gapper); ok {
		_ = g.Gap()
	}
}
