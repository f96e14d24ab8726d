package draw

import (
	"fmt"
	"time"
)

// Waterfall is the attempts (or trace spans) as bars on one time axis,
// drawn as SVG so no inline style is needed.
type Waterfall struct {
	Source        string
	Width, Height int
	Rows          []Bar
	Total         string
}

type Bar struct {
	Label, Class, Title string
	Y, TY, X, W         int
}

const (
	wfLabel, wfBar, wfRow = 220, 640, 18
	wfMaxRows             = 3000
)

// Span is one bar to draw: a label, a CSS class (its outcome), its kind
// (for the title) and its time; a zero End is still running at now.
type Span struct {
	Label, Class, Kind string
	Start, End         time.Time
}

// Build lays out spans on one time axis.
func Build(spans []Span, source string, now time.Time) *Waterfall {
	w := &Waterfall{Source: source, Width: wfLabel + wfBar + 20}
	if len(spans) == 0 {
		return w
	}
	if len(spans) > wfMaxRows {
		spans = spans[:wfMaxRows]
	}
	t0, t1 := spans[0].Start, spans[0].Start
	for _, s := range spans {
		if s.Start.Before(t0) {
			t0 = s.Start
		}
		end := s.End
		if end.IsZero() {
			end = now
		}
		if end.After(t1) {
			t1 = end
		}
	}
	total := max(t1.Sub(t0), time.Millisecond)
	w.Total = total.Round(time.Millisecond).String()
	for i, s := range spans {
		end := s.End
		if end.IsZero() {
			end = now
		}
		x := int(float64(s.Start.Sub(t0)) / float64(total) * wfBar)
		bw := max(int(float64(end.Sub(s.Start))/float64(total)*wfBar), 2)
		y := i*wfRow + 4
		kind := ""
		if s.Kind != "" {
			kind = " (" + s.Kind + ")"
		}
		w.Rows = append(w.Rows, Bar{Label: s.Label, Class: s.Class, Y: y, TY: y + 12, X: wfLabel + x, W: bw,
			Title: fmt.Sprintf("%s%s, %s: %s at +%s", s.Label, kind, s.Class, end.Sub(s.Start).Round(time.Millisecond), s.Start.Sub(t0).Round(time.Millisecond))})
	}
	w.Height = len(w.Rows)*wfRow + 8
	return w
}
