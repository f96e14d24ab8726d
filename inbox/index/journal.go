package index

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"os"
	"time"

	"github.com/sandgate/sandgate/runtime"
)

// journalCap bounds how much of a journal the inbox reads: a long run's
// journal is a few MiB; a bigger file is shown as far as the cap.
const journalCap = 64 << 20

// ReadEvents decodes a journal read through r. A torn or bad line ends
// the read: the page shows what is known rather than nothing.
func ReadEvents(r *os.Root, name string) ([]runtime.Event, error) {
	b, _, err := ReadCapped(r, name, journalCap)
	if err != nil {
		return nil, err
	}
	return DecodeEvents(b), nil
}

func DecodeEvents(b []byte) []runtime.Event {
	var out []runtime.Event
	r := bufio.NewReader(bytes.NewReader(b))
	for {
		raw, err := r.ReadBytes('\n')
		if len(bytes.TrimSpace(raw)) > 0 {
			var ev runtime.Event
			if json.Unmarshal(raw, &ev) != nil {
				return out
			}
			out = append(out, ev)
		}
		if err == io.EOF || err != nil {
			return out
		}
	}
}

// Attempt is one node attempt as the run page shows it.
type Attempt struct {
	Node       string
	N          int
	Start, End time.Time
	Outcome    string
	Error      string
	Canceled   bool
	TimedOut   bool // the runtime stopped it at its node's timeout
	DurationMS int64
	Tokens     int
	Feedback   string
	Outputs    map[string]any
	Edge, To   string
}

// State is the attempt's state as a CSS-safe word.
func (a *Attempt) State() string {
	switch {
	case a.Canceled:
		return "canceled"
	case a.Error != "":
		return "error"
	case a.Outcome != "":
		return a.Outcome
	case a.End.IsZero():
		return "running"
	}
	return "unknown"
}

// View is a run folded from its journal. Unlike runtime.Summary it keeps
// each attempt's start time, which the waterfall needs.
type View struct {
	ID, Blueprint    string
	Status           string
	Kind, Reason     string
	Started, Last    time.Time
	Tokens, NodeRuns int
	Cost             float64
	Attempts         []*Attempt
	// Reached are terminal nodes an edge led to.
	Reached map[string]bool
	Sandbox []string
	Inputs  map[string]any
	LastSeq int
	// Answers are the people's answers to hand-offs, oldest first.
	Answers []Answer
	// finished: the journal has a run_finished after its last answer.
	finished bool
	// durationMS is runtime.Elapsed of the journal: the workspace set-up
	// included, waits for answers left out, as sandgate show counts.
	durationMS int64
}

// Answer is one answered event: who told which node what, and when.
type Answer struct {
	By, Node, Note string
	Time           time.Time
}

func Fold(events []runtime.Event) *View {
	v := &View{Status: string(runtime.StatusRunning), Reached: map[string]bool{}}
	open := map[string]*Attempt{}
	key := func(ev runtime.Event) string { return ev.Node + "#" + itoa(ev.Attempt) }
	for _, ev := range events {
		v.LastSeq = ev.Seq
		if ev.Time.After(v.Last) {
			v.Last = ev.Time
		}
		switch ev.Type {
		case runtime.EvRunStarted:
			v.ID, v.Blueprint, v.Started, v.Inputs = ev.RunID, ev.Blueprint, ev.Time, ev.Inputs
		case runtime.EvEnvironment:
			v.Sandbox = ev.Layers
		case runtime.EvNodeStarted:
			a := &Attempt{Node: ev.Node, N: ev.Attempt, Start: ev.Time}
			v.NodeRuns++
			v.Attempts = append(v.Attempts, a)
			open[key(ev)] = a
		case runtime.EvNodeFinished, runtime.EvNodeCanceled:
			a := open[key(ev)]
			if a == nil {
				continue
			}
			a.End = ev.Time
			if ev.Type == runtime.EvNodeCanceled {
				// Its real time, not 0: a canceled node may have worked
				// for minutes.
				a.Canceled, a.DurationMS = true, max(ev.DurationMS, ev.Time.Sub(a.Start).Milliseconds())
				continue
			}
			a.Outcome, a.Error, a.DurationMS, a.Tokens = string(ev.Outcome), ev.Error, ev.DurationMS, ev.Tokens
			a.Feedback, a.Outputs, a.TimedOut = ev.Feedback, ev.Outputs, ev.TimedOut
			v.Tokens += ev.Tokens
			v.Cost += ev.Cost
		case runtime.EvEdgeTaken:
			v.Reached[ev.To] = true
			for i := len(v.Attempts) - 1; i >= 0; i-- {
				if v.Attempts[i].Node == ev.Node {
					v.Attempts[i].Edge, v.Attempts[i].To = ev.Edge, ev.To
					break
				}
			}
		case runtime.EvRunFinished:
			v.Status, v.Kind, v.Reason, v.finished = string(ev.Status), ev.Kind, ev.Reason, true
		case runtime.EvAnswered:
			// The handed-off run goes on: running again until its next
			// run_finished.
			v.Status, v.Kind, v.Reason, v.finished = string(runtime.StatusRunning), "", "", false
			v.Answers = append(v.Answers, Answer{By: ev.By, Node: ev.Node, Note: ev.Feedback, Time: ev.Time})
		}
	}
	total, _ := runtime.Elapsed(events)
	v.durationMS = total.Milliseconds()
	return v
}

// DurationMS is the run's length so far, as runtime.Elapsed counts it.
func (v *View) DurationMS() int64 { return v.durationMS }
