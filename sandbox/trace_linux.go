//go:build linux

package sandbox

import (
	"fmt"
	"os"
	"time"
)

// SANDGATE_BOX_TRACE=1 prints how long each step of a box's start and
// close took, on stderr ("TRACE who step ms"; init's lines come with its
// log once the box is built). It is how the box start's time was split
// up for issue 25; off, a mark costs one test of a bool.
var traceOn = os.Getenv("SANDGATE_BOX_TRACE") != ""

// tracer times the steps of one start, close or init.
type tracer struct {
	last time.Time
	who  string
}

func newTracer(who string) *tracer { return &tracer{last: time.Now(), who: who} }

// mark prints the time since the previous mark.
func (t *tracer) mark(what string) {
	if !traceOn || t == nil {
		return
	}
	now := time.Now()
	fmt.Fprintf(os.Stderr, "TRACE %s %s %.3f\n", t.who, what, float64(now.Sub(t.last).Microseconds())/1000)
	t.last = now
}

// itr is init's tracer (nil in the harness, and so silent).
var itr *tracer
