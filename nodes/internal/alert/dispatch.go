package alert

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"time"

	"github.com/sandgate/sandgate/secrets"
)

// Options configure a run's dispatcher; zero fields take the defaults.
type Options struct {
	Sinks []Sink
	// Redact removes the run's credentials from every event.
	Redact *secrets.Redactor
	// Repos are the run's own repositories (owner/name, or a path for a
	// local remote): a push or review elsewhere raises an alert.
	Repos []string
	// Resume sends again what the run's record says is still owed.
	Resume bool

	Hold     time.Duration // how long a new event waits for repeats (2 s)
	Window   time.Duration // repeats within it after a send fold into one more (5 min)
	Interval time.Duration // one release per Interval beyond Burst (3 s)
	Burst    int           // releases allowed at once (10)
	Queue    int           // events a sink's queue and the held list keep (100)
	Attempts int           // attempts per event and sink (6)
	Backoff  time.Duration // first retry's wait, doubled each time (1 s)
	MaxWait  time.Duration // the longest wait between attempts, Retry-After included (60 s)
	Drain    time.Duration // how long Close waits for deliveries (5 s)
}

func (o *Options) defaults() {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&o.Hold, 2*time.Second)
	def(&o.Window, 5*time.Minute)
	def(&o.Interval, 3*time.Second)
	def(&o.Backoff, time.Second)
	def(&o.MaxWait, time.Minute)
	def(&o.Drain, 5*time.Second)
	for _, n := range []struct {
		p *int
		v int
	}{{&o.Burst, 10}, {&o.Queue, 100}, {&o.Attempts, 6}} {
		if *n.p <= 0 {
			*n.p = n.v
		}
	}
}

// Dispatcher is one run's alerts on their way to the sinks. A nil
// Dispatcher drops every event (no sink configured).
type Dispatcher struct {
	o       Options
	run     string
	rec     *recorder
	workers []*worker
	repos   map[string]bool

	mu       sync.Mutex
	keys     map[string]*keyState
	held     []*keyState // in arrival order
	tokens   float64
	refilled time.Time
	closing  bool
	wake     chan struct{}
	released chan struct{} // closed when the releaser has handed everything on
}

type keyState struct {
	key      string
	ev       *Event    // held, not yet released; nil once released
	at       time.Time // when ev is released
	released time.Time // when the last one was
}

// Open starts the dispatcher of the run in runDir, or returns nil when o
// names no sink. It refuses a sink Check refuses.
func Open(runDir string, o Options) (*Dispatcher, error) {
	if len(o.Sinks) == 0 {
		return nil, nil
	}
	o.defaults()
	names := map[string]bool{}
	for _, s := range o.Sinks {
		if err := s.Check(); err != nil {
			return nil, err
		}
		if names[s.name()] {
			return nil, fmt.Errorf("alert sink %s: given twice", s.name())
		}
		names[s.name()] = true
	}
	d := &Dispatcher{o: o, run: filepath.Base(runDir), rec: &recorder{path: filepath.Join(runDir, File)},
		keys: map[string]*keyState{}, tokens: float64(o.Burst), refilled: time.Now(),
		wake: make(chan struct{}, 1), released: make(chan struct{}), repos: map[string]bool{}}
	for _, r := range o.Repos {
		d.repos[normRepo(r)] = true
	}
	var due map[string][]Event
	if o.Resume {
		var err error
		if due, err = owed(runDir); err != nil {
			return nil, fmt.Errorf("alerts: read %s: %w", File, err)
		}
	}
	client := newClient()
	for _, s := range o.Sinks {
		w := newWorker(d, s, client)
		for _, ev := range due[s.name()] {
			w.push(ev)
		}
		d.workers = append(d.workers, w)
		go w.run()
	}
	go d.release()
	return d, nil
}

// Raise takes an event for the sinks; it never blocks on delivery. The
// run, time and count are filled in, and the event is redacted.
func (d *Dispatcher) Raise(e Event) {
	if d == nil {
		return
	}
	e.Run = d.run
	if e.Time.IsZero() {
		e.Time = time.Now().UTC()
	}
	if e.Count <= 0 {
		e.Count = 1
	}
	e = e.redact(d.o.Redact)
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closing {
		// Too late to send: the record still shows it.
		e.ID = newID()
		d.rec.write(Record{ID: e.ID, Status: StatusQueued, Event: &e})
		d.rec.write(Record{ID: e.ID, Status: StatusUndelivered, Error: "raised after the run's alerts closed"})
		return
	}
	d.hold(e)
}

// hold folds e into a held event of its kind and key or holds it anew,
// dropping the oldest held event when the list is full. d.mu is held.
func (d *Dispatcher) hold(e Event) {
	k := e.Kind + "\x00" + e.Key
	st := d.keys[k]
	if st != nil && st.ev != nil {
		st.ev.Count += e.Count
		return
	}
	now := time.Now()
	if st == nil {
		st = &keyState{key: k}
		d.keys[k] = st
	}
	st.ev, st.at = &e, now.Add(d.o.Hold)
	if !st.released.IsZero() && now.Sub(st.released) < d.o.Window {
		// Sent already: repeats wait for the window's end, as one.
		st.at = st.released.Add(d.o.Window)
	}
	if e.Kind != KindDropped && d.countHeld() >= d.o.Queue {
		d.dropOldest()
	}
	d.held = append(d.held, st)
	d.signal()
}

func (d *Dispatcher) countHeld() int {
	n := 0
	for _, st := range d.held {
		if st.ev.Kind != KindDropped {
			n++
		}
	}
	return n
}

func (d *Dispatcher) dropOldest() {
	for i, st := range d.held {
		if st.ev.Kind == KindDropped {
			continue
		}
		n := st.ev.Count
		d.held = append(d.held[:i], d.held[i+1:]...)
		st.ev = nil
		d.hold(Event{Kind: KindDropped, Run: d.run, Time: time.Now().UTC(), Count: n,
			Text: "alerts were dropped: more distinct alerts than the queue holds"})
		return
	}
}

func (d *Dispatcher) signal() {
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

// release hands held events on when their time comes and the rate allows,
// and everything at once when the dispatcher closes.
func (d *Dispatcher) release() {
	defer close(d.released)
	for {
		d.mu.Lock()
		due, next := d.due(time.Now())
		closing := d.closing && len(d.held) == 0
		d.mu.Unlock()
		for _, e := range due {
			d.send(e)
		}
		if closing {
			return
		}
		if len(due) > 0 {
			continue
		}
		t := time.NewTimer(next)
		select {
		case <-t.C:
		case <-d.wake:
		}
		t.Stop()
	}
}

// due takes the held events to release now, and says how long until the
// next may be. d.mu is held.
func (d *Dispatcher) due(now time.Time) ([]Event, time.Duration) {
	d.tokens = min(float64(d.o.Burst), d.tokens+now.Sub(d.refilled).Seconds()/d.o.Interval.Seconds())
	d.refilled = now
	var out []Event
	next := time.Hour
	keep := d.held[:0]
	for _, st := range d.held {
		ready := d.closing || !st.at.After(now)
		if ready && (d.closing || d.tokens >= 1) {
			if !d.closing {
				d.tokens--
			}
			out = append(out, *st.ev)
			st.ev, st.released = nil, now
			continue
		}
		keep = append(keep, st)
		switch {
		case !ready:
			next = min(next, st.at.Sub(now))
		default:
			next = min(next, time.Duration((1-d.tokens)*float64(d.o.Interval)))
		}
	}
	d.held = keep
	return out, max(next, time.Millisecond)
}

// send records e as queued for every sink, then queues it.
func (d *Dispatcher) send(e Event) {
	e.ID = newID()
	names := make([]string, len(d.workers))
	for i, w := range d.workers {
		names[i] = w.name
	}
	d.rec.write(Record{ID: e.ID, Status: StatusQueued, Event: &e, Sinks: names})
	for _, w := range d.workers {
		w.push(e)
	}
}

// Close releases every held event, waits at most Drain for the sinks and
// abandons what is left (recorded undelivered, resent on resume). It
// returns an error naming how many deliveries were abandoned.
func (d *Dispatcher) Close() error {
	if d == nil {
		return nil
	}
	d.mu.Lock()
	if d.closing {
		d.mu.Unlock()
		return nil
	}
	d.closing = true
	d.signal()
	d.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), d.o.Drain)
	defer cancel()
	select {
	case <-d.released:
	case <-ctx.Done():
	}
	for _, w := range d.workers {
		w.close()
	}
	for _, w := range d.workers {
		select {
		case <-w.done:
		case <-ctx.Done():
			// The bound is up: in-flight requests and waits end now.
			for _, w := range d.workers {
				w.cancel()
			}
			<-w.done
		}
	}
	abandoned := 0
	for _, w := range d.workers {
		abandoned += w.abandoned
	}
	if abandoned > 0 {
		return fmt.Errorf("alerts: %d deliveries abandoned at the run's end (see %s)", abandoned, File)
	}
	return nil
}

func newID() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

var errClosed = errors.New("the run ended before the alert was delivered")
