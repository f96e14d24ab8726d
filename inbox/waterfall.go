package inbox

import (
	"fmt"

	"github.com/sandgate/sandgate/inbox/draw"
	"github.com/sandgate/sandgate/inbox/index"
)

// attemptSpans turns the journal's attempts into waterfall rows.
func attemptSpans(v *index.View) []draw.Span {
	out := make([]draw.Span, 0, len(v.Attempts))
	for _, a := range v.Attempts {
		out = append(out, draw.Span{Label: fmt.Sprintf("%s #%d", a.Node, a.N), Class: a.State(), Start: a.Start, End: a.End})
	}
	return out
}
