package inbox

import (
	"fmt"
	"time"
)

// waterfall is the attempts (or trace spans) as bars on one time axis,
// drawn as SVG so no inline style is needed.
type waterfall struct {
	Source        string
	Width, Height int
	Rows          []bar
	Total         string
}

type bar struct {
	Label, Class, Title string
	Y, TY, X, W         int
}

const (
	wfLabel, wfBar, wfRow = 220, 640, 18
	wfMaxRows             = 3000
)

func buildWaterfall(spans []span, source string, now time.Time) *waterfall {
	w := &waterfall{Source: source, Width: wfLabel + wfBar + 20}
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
		w.Rows = append(w.Rows, bar{Label: s.Label, Class: s.Class, Y: y, TY: y + 12, X: wfLabel + x, W: bw,
			Title: fmt.Sprintf("%s%s, %s: %s at +%s", s.Label, kind, s.Class, end.Sub(s.Start).Round(time.Millisecond), s.Start.Sub(t0).Round(time.Millisecond))})
	}
	w.Height = len(w.Rows)*wfRow + 8
	return w
}

// attemptSpans turns the journal's attempts into waterfall rows.
func attemptSpans(v *runView) []span {
	out := make([]span, 0, len(v.Attempts))
	for _, a := range v.Attempts {
		out = append(out, span{Label: fmt.Sprintf("%s #%d", a.Node, a.N), Class: a.State(), Start: a.Start, End: a.End})
	}
	return out
}
