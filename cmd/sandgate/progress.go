package main

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/sandgate/sandgate/internal/lines"
	"github.com/sandgate/sandgate/internal/termtext"
	"github.com/sandgate/sandgate/runtime"
)

// progress prints a line per node attempt. On a terminal the "running"
// line is replaced in place by the attempt's verdict, and the marks are
// coloured (unless NO_COLOR). Text from the run (node errors, answers'
// notes) goes through termtext.Line: the only control sequences the
// terminal gets are progress's own.
//
// On a terminal a ticker also rewrites that line every tickEvery with the
// elapsed time, so a long silent step (a test suite, a model call) never
// looks hung.
type progress struct {
	mu      sync.Mutex
	w       io.Writer
	enabled bool
	tty     bool
	color   bool
	start   map[string]time.Time
	// now and newTicker are the clock, replaced in tests.
	now       func() time.Time
	newTicker func() (<-chan time.Time, func())
	stop      chan struct{}
	done      chan struct{}
}

// tickEvery is how often a running step's line is refreshed on a TTY.
const tickEvery = 2 * time.Second

func newProgress(w io.Writer, enabled bool) *progress {
	return &progress{w: w, enabled: enabled, tty: termtext.IsTerminal(w), color: termtext.Colors(w), start: map[string]time.Time{}, now: time.Now,
		newTicker: func() (<-chan time.Time, func()) { t := time.NewTicker(tickEvery); return t.C, t.Stop }}
}

func (p *progress) Event(ev runtime.Event) {
	if !p.enabled {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	key := fmt.Sprintf("%s#%d", ev.Node, ev.Attempt)
	switch ev.Type {
	case runtime.EvRunStarted:
		fmt.Fprintf(p.w, "run %s: %s\n", termtext.Line(ev.RunID), termtext.Line(ev.Blueprint))
	case runtime.EvRunResumed:
		fmt.Fprintln(p.w, "resumed from the journal")
	case runtime.EvAnswered:
		fmt.Fprintf(p.w, "answered by %s: %s gets the note %q\n", termtext.Line(ev.By), ev.Node, lines.First(ev.Feedback))
	case runtime.EvNodeStarted:
		p.start[key] = p.now()
		p.clear()
		if p.tty {
			fmt.Fprintf(p.w, "  … %-14s #%d running", ev.Node, ev.Attempt)
			p.startTicker()
		} else {
			// A log has no line to rewrite: say when each step starts, so
			// a long one is seen to be under way.
			fmt.Fprintf(p.w, "  … %-14s #%d started\n", ev.Node, ev.Attempt)
		}
	case runtime.EvNodeFinished:
		delete(p.start, key)
		p.clear()
		verdict := string(ev.Outcome)
		if ev.TimedOut {
			verdict = "timed out"
		}
		if ev.Error != "" {
			verdict = "error: " + termtext.Line(lines.First(ev.Error))
		}
		fmt.Fprintf(p.w, "  %s %-14s #%d %-7s %6d ms\n", p.mark(ev), ev.Node, ev.Attempt, verdict, ev.DurationMS)
	case runtime.EvNodeCanceled:
		delete(p.start, key)
		p.clear()
		fmt.Fprintf(p.w, "  ✗ %-14s #%d canceled\n", ev.Node, ev.Attempt)
	case runtime.EvRunClosed:
		fmt.Fprintf(p.w, "  harness wrap-up (after the last node) %6d ms\n", ev.DurationMS)
	case runtime.EvEdgeTaken:
		if ev.Count > 0 {
			fmt.Fprintf(p.w, "    ↺ %s → %s (%d)\n", ev.Edge, ev.To, ev.Count)
		}
	}
}

// Note implements runtime.NoteObserver: what a long step (the snapshot,
// the box, CI's clean box) is doing, on a line of its own.
func (p *progress) Note(n runtime.Note) {
	if !p.enabled {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.clear()
	if n.Node == "" {
		// The run's own steps, before its first node: as its other lines.
		fmt.Fprintf(p.w, "run %s: %s\n", n.RunID, lines.First(n.Text))
	} else {
		fmt.Fprintf(p.w, "  … %s #%d: %s\n", n.Node, n.Attempt, lines.First(n.Text))
	}
	p.redraw()
}

// redraw puts the running line back after a note on a terminal; p.mu is
// held.
func (p *progress) redraw() {
	if p.tty && len(p.start) > 0 {
		fmt.Fprintf(p.w, "  … running %s", p.running())
	}
}

// startTicker starts the refresher once; p.mu is held.
func (p *progress) startTicker() {
	if p.stop != nil {
		return
	}
	stop, done := make(chan struct{}), make(chan struct{})
	p.stop, p.done = stop, done
	c, stopTicker := p.newTicker()
	go func() {
		defer close(done)
		defer stopTicker()
		for {
			select {
			case <-stop:
				return
			case <-c:
				p.refresh()
			}
		}
	}()
}

// refresh rewrites the running line with what runs and for how long.
func (p *progress) refresh() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.start) == 0 {
		return
	}
	p.clear()
	fmt.Fprintf(p.w, "  … running %s", p.running())
}

// running lists what runs and for how long; p.mu is held.
func (p *progress) running() string {
	keys := make([]string, 0, len(p.start))
	for k := range p.start {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %s", k, p.now().Sub(p.start[k]).Round(time.Second))
	}
	return strings.Join(parts, ", ")
}

// close stops the refresher.
func (p *progress) close() {
	p.mu.Lock()
	stop, done := p.stop, p.done
	p.stop = nil
	p.mu.Unlock()
	if stop != nil {
		close(stop)
		<-done
	}
}

func (p *progress) clear() {
	if p.tty {
		fmt.Fprint(p.w, "\r\033[K")
	}
}

// mark is an attempt's verdict as one coloured character.
func (p *progress) mark(ev runtime.Event) string {
	switch {
	case ev.Error != "":
		return termtext.Paint(p.color, termtext.Red, "!")
	case ev.Outcome == runtime.OutcomePass:
		return termtext.Paint(p.color, termtext.Green, "✓")
	case ev.Outcome == runtime.OutcomeHandoff:
		return termtext.Paint(p.color, termtext.Yellow, "⇢")
	}
	return termtext.Paint(p.color, termtext.Red, "✗")
}
