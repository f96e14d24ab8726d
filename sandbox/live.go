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
// out of Live (the command's Result still has all of it) and a note says
// how much.
type liveQueue struct {
	mu      sync.Mutex
	wake    chan struct{}
	done    chan struct{}
	parts   [][]byte
	held    int
	tail    bool // the last part is the queue's own copy, for Write to add to
	dropped int
	closed  bool
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
		return
	}
	switch {
	case !copied:
		q.parts, q.tail = append(q.parts, b), false
	case q.tail:
		last := len(q.parts) - 1
		q.parts[last] = append(q.parts[last], b...)
	default:
		q.parts, q.tail = append(q.parts, bytes.Clone(b)), true
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
	if q.dropped > 0 {
		_, _ = fmt.Fprintf(w, "\n[sandgate: %d bytes of output not shown live]\n", q.dropped)
	}
}

func (q *liveQueue) flush(w io.Writer) {
	q.mu.Lock()
	parts := q.parts
	q.parts, q.held, q.tail = nil, 0, false
	q.mu.Unlock()
	for _, b := range parts {
		_, _ = w.Write(b)
	}
}
