package alert

import (
	"context"
	"math/rand/v2"
	"net/http"
	"sync"
	"time"

	"github.com/sandgate/sandgate/internal/pause"
)

// worker delivers one sink's events in order, one at a time, so a dead
// receiver holds up only its own sink.
type worker struct {
	d      *Dispatcher
	sink   Sink
	name   string
	client *http.Client
	ctx    context.Context
	cancel context.CancelFunc

	mu        sync.Mutex
	q         []Event
	dropped   int // events dropped from a full queue, not yet reported
	closing   bool
	wake      chan struct{}
	done      chan struct{}
	abandoned int // set before done closes
}

func newWorker(d *Dispatcher, s Sink, c *http.Client) *worker {
	ctx, cancel := context.WithCancel(context.Background())
	return &worker{d: d, sink: s, name: s.name(), client: c, ctx: ctx, cancel: cancel,
		wake: make(chan struct{}, 1), done: make(chan struct{})}
}

// push queues e, dropping the oldest queued event when the queue is full
// (recorded, and reported to the sink as a count).
func (w *worker) push(e Event) {
	w.mu.Lock()
	if len(w.q) >= w.d.o.Queue {
		old := w.q[0]
		w.q = w.q[1:]
		w.dropped += old.Count
		w.d.rec.write(Record{ID: old.ID, Status: StatusDropped, Sink: w.name, Error: "the sink's queue was full"})
	}
	w.q = append(w.q, e)
	w.mu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

func (w *worker) close() {
	w.mu.Lock()
	w.closing = true
	w.mu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// next is the event to deliver: a report of dropped events first.
func (w *worker) next() (Event, bool, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.dropped > 0 {
		e := Event{ID: newID(), Kind: KindDropped, Run: w.d.run, Time: time.Now().UTC(), Count: w.dropped,
			Text: "alerts for this sink were dropped: its queue was full"}
		w.dropped = 0
		w.d.rec.write(Record{ID: e.ID, Status: StatusQueued, Event: &e, Sinks: []string{w.name}})
		return e, true, false
	}
	if len(w.q) > 0 {
		e := w.q[0]
		w.q = w.q[1:]
		return e, true, false
	}
	return Event{}, false, w.closing
}

func (w *worker) run() {
	defer close(w.done)
	for {
		e, ok, closing := w.next()
		switch {
		case ok && w.ctx.Err() == nil:
			w.deliver(e)
		case ok:
			w.abandon(e)
		case closing:
			return
		default:
			select {
			case <-w.wake:
			case <-w.ctx.Done():
			}
		}
	}
}

// abandon records e as not delivered: the run is ending.
func (w *worker) abandon(e Event) {
	w.abandoned++
	w.d.rec.write(Record{ID: e.ID, Status: StatusUndelivered, Sink: w.name, Error: errClosed.Error()})
}

// deliver tries e until the sink takes it, refuses it, or the attempts
// run out; each failed attempt is recorded.
func (w *worker) deliver(e Event) {
	body, err := w.sink.payload(e)
	if err != nil {
		w.d.rec.write(Record{ID: e.ID, Status: StatusRefused, Sink: w.name, Error: err.Error()})
		return
	}
	for n := 1; ; n++ {
		o := post(w.ctx, w.client, w.sink.URL, body)
		rec := Record{ID: e.ID, Sink: w.name, Attempts: n, HTTPStatus: o.status}
		if o.err != nil {
			rec.Error = o.err.Error()
		}
		switch {
		case o.err == nil:
			rec.Status = StatusDelivered
		case w.ctx.Err() != nil:
			w.abandoned++
			rec.Status = StatusUndelivered
		case !o.retry:
			rec.Status = StatusRefused
		case n >= w.d.o.Attempts:
			rec.Status = StatusGaveUp
		default:
			rec.Status = StatusFailed
		}
		w.d.rec.write(rec)
		if rec.Status != StatusFailed {
			return
		}
		if !w.sleep(w.wait(n, o.retryAfter)) {
			w.abandon(e)
			return
		}
	}
}

// wait is how long to wait after the nth failed attempt: the receiver's
// Retry-After when it gave one, else exponential backoff with jitter
// (between half and all of Backoff·2^(n-1)); never more than MaxWait.
func (w *worker) wait(n int, retryAfter time.Duration) time.Duration {
	if retryAfter > 0 {
		return min(retryAfter, w.d.o.MaxWait)
	}
	d := min(w.d.o.Backoff<<min(n-1, 20), w.d.o.MaxWait)
	return d/2 + rand.N(d/2+1)
}

// sleep waits d unless the run's end cancels the worker first.
func (w *worker) sleep(d time.Duration) bool { return pause.For(w.ctx, d) == nil }
