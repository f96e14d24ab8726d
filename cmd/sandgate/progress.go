package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/sandgate/sandgate/runtime"
)

// progress prints a line per node attempt. On a terminal the "running"
// line is replaced in place by the attempt's verdict.
type progress struct {
	w       io.Writer
	enabled bool
	tty     bool
	start   map[string]time.Time
}

func newProgress(w io.Writer, enabled bool) *progress {
	tty := false
	if f, ok := w.(*os.File); ok {
		if st, err := f.Stat(); err == nil {
			tty = st.Mode()&os.ModeCharDevice != 0
		}
	}
	return &progress{w: w, enabled: enabled, tty: tty, start: map[string]time.Time{}}
}

func (p *progress) Event(ev runtime.Event) {
	if !p.enabled {
		return
	}
	key := fmt.Sprintf("%s#%d", ev.Node, ev.Attempt)
	switch ev.Type {
	case runtime.EvRunStarted:
		fmt.Fprintf(p.w, "run %s: %s\n", ev.RunID, ev.Blueprint)
	case runtime.EvRunResumed:
		fmt.Fprintln(p.w, "resumed from the journal")
	case runtime.EvNodeStarted:
		p.start[key] = time.Now()
		if p.tty {
			fmt.Fprintf(p.w, "  … %-14s #%d running", ev.Node, ev.Attempt)
		}
	case runtime.EvNodeFinished:
		p.clear()
		verdict := string(ev.Outcome)
		if ev.Error != "" {
			verdict = "error: " + firstLine(ev.Error)
		}
		fmt.Fprintf(p.w, "  %s %-14s #%d %-7s %6d ms\n", mark(ev), ev.Node, ev.Attempt, verdict, ev.DurationMS)
	case runtime.EvNodeCanceled:
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

func (p *progress) clear() {
	if p.tty {
		fmt.Fprint(p.w, "\r\033[K")
	}
}

func mark(ev runtime.Event) string {
	switch {
	case ev.Error != "":
		return "!"
	case ev.Outcome == runtime.OutcomePass:
		return "✓"
	case ev.Outcome == runtime.OutcomeHandoff:
		return "⇢"
	}
	return "✗"
}

func firstLine(s string) string {
	for i, r := range s {
		if r == '\n' {
			return s[:i]
		}
	}
	return s
}
