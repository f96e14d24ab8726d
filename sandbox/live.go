package sandbox

import (
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
	buf     []byte
	spare   []byte // the buffer last written, for push to fill again
	dropped int
	closed  bool
}

const liveMax = 4 << 20

func newLiveQueue(w io.Writer) *liveQueue {
	q := &liveQueue{wake: make(chan struct{}, 1), done: make(chan struct{})}
	go q.drain(w)
	return q
}

// push queues b without blocking.
func (q *liveQueue) push(b []byte) {
	if q == nil || len(b) == 0 {
		return
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed || len(q.buf)+len(b) > liveMax {
		q.dropped += len(b)
		return
	}
	q.buf = append(q.buf, b...)
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// Write is push, for a writer of the command's own output.
func (q *liveQueue) Write(p []byte) (int, error) {
	q.push(p)
	return len(p), nil
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

// flush writes what the queue holds; the two buffers take turns, so a
// long output is not copied into a fresh allocation each time (a Writer
// keeps none of what it is given).
func (q *liveQueue) flush(w io.Writer) {
	q.mu.Lock()
	b := q.buf
	q.buf, q.spare = q.spare, nil
	q.mu.Unlock()
	if len(b) > 0 {
		_, _ = w.Write(b)
	}
	q.mu.Lock()
	q.spare = b[:0]
	q.mu.Unlock()
}
