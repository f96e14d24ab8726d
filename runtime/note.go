package runtime

import (
	"context"
	"fmt"
	"time"

	"github.com/sandgate/sandgate/secrets"
)

// Note is a progress note: what a long step is doing now (taking a
// snapshot, starting a box, building CI's clean box). Notes are not
// journaled; they tell a person watching that nothing hangs, and what
// the wait is for.
type Note struct {
	RunID string
	// Node and Attempt name the attempt the note is about; Node is empty
	// for the run's own steps (its workspace).
	Node    string
	Attempt int
	Text    string
	Time    time.Time
}

// NoteObserver is an Observer that also wants progress notes (see Notef).
// Unlike Event, Note may be called from any goroutine, concurrently.
type NoteObserver interface {
	Note(Note)
}

type noteKey struct{}

// noteSink is where a context's notes go.
type noteSink struct {
	obs     NoteObserver
	redact  *secrets.Redactor
	runID   string
	node    string
	attempt int
}

// Notef tells whoever watches the run what the step of ctx is doing (the
// run's Prepare hook or a node attempt get such a context); the text is
// redacted like everything the run writes. Without a NoteObserver it does
// nothing.
func Notef(ctx context.Context, format string, args ...any) {
	s, ok := ctx.Value(noteKey{}).(noteSink)
	if !ok {
		return
	}
	s.obs.Note(Note{RunID: s.runID, Node: s.node, Attempt: s.attempt, Text: s.redact.String(fmt.Sprintf(format, args...)), Time: time.Now()})
}

// withNotes makes ctx carry notes about node's attempt to the runtime's
// observer, when it wants them.
func (x *execution) withNotes(ctx context.Context, node string, attempt int) context.Context {
	obs, ok := x.rt.Observer.(NoteObserver)
	if !ok {
		return ctx
	}
	return context.WithValue(ctx, noteKey{}, noteSink{obs: obs, redact: x.redact, runID: x.meta.RunID, node: node, attempt: attempt})
}
