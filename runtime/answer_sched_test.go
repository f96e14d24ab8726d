package runtime_test

import (
	"strings"
	"testing"
	"time"

	"github.com/sandgate/sandgate/blueprint"
	"github.com/sandgate/sandgate/runtime"
)

// driver feeds a scheduler the way a run would, with a verdict per node
// attempt, and keeps the journal it would have written.
type driver struct {
	t      *testing.T
	s      *runtime.Scheduler
	now    time.Time
	events []runtime.Event
	queue  []runtime.Event
	// tokens is what every finished attempt reports.
	tokens int
}

func newDriver(t *testing.T, src string) (*driver, *blueprint.Blueprint) {
	t.Helper()
	bp, err := blueprint.Parse("t.yaml", []byte(src), blueprint.WithTypes(testRegistry(t)))
	if err != nil {
		t.Fatal(err)
	}
	return &driver{t: t, s: runtime.NewScheduler(bp), now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}, bp
}

// apply feeds one input and queues the nodes it starts.
func (d *driver) apply(ev runtime.Event) ([]runtime.Event, error) {
	d.now = d.now.Add(time.Second)
	ev.Time = d.now
	cmds, err := d.s.Apply(ev)
	if err != nil {
		return nil, err
	}
	d.events = append(append(d.events, ev), cmds...)
	for _, c := range cmds {
		if c.Type == runtime.EvNodeStarted {
			d.queue = append(d.queue, c)
		}
	}
	return cmds, nil
}

// settle finishes queued nodes with verdict's outcomes until the run ends.
func (d *driver) settle(verdict func(started runtime.Event) runtime.Outcome) {
	for len(d.queue) > 0 {
		c := d.queue[0]
		d.queue = d.queue[1:]
		o := verdict(c)
		fb := ""
		if o == runtime.OutcomeFail {
			fb = c.Node + " failed"
		}
		if _, err := d.apply(runtime.Event{Type: runtime.EvNodeFinished, Node: c.Node, Attempt: c.Attempt, Outcome: o, Feedback: fb, Tokens: d.tokens}); err != nil {
			d.t.Fatal(err)
		}
	}
}

// lintFails fails every lint attempt.
func lintFails(c runtime.Event) runtime.Outcome {
	if c.Node == "lint" {
		return runtime.OutcomeFail
	}
	return runtime.OutcomePass
}

func startsOf(events []runtime.Event, node string) []runtime.Event {
	var out []runtime.Event
	for _, e := range events {
		if e.Type == runtime.EvNodeStarted && e.Node == node {
			out = append(out, e)
		}
	}
	return out
}

func TestSchedulerAnswer(t *testing.T) {
	cases := []struct {
		name    string
		budget  string
		first   func(runtime.Event) runtime.Outcome // verdicts before the answer
		node    string
		answers int // answers given before the checked one
		wantErr string
	}{
		{name: "handed off restarts the node", first: lintFails, node: "implement"},
		{name: "may answer any working node", first: lintFails, node: "lint"},
		{name: "succeeded run", first: func(runtime.Event) runtime.Outcome { return runtime.OutcomePass },
			node: "implement", wantErr: "ended succeeded (reached done): only a handed-off run can be answered"},
		{name: "unknown node", first: lintFails, node: "implemnt", wantErr: `no node "implemnt" (did you mean "implement"?)`},
		{name: "terminal node", first: lintFails, node: "done", wantErr: "node done is a succeed node, which only ends a run; answer a node that does work (one of [implement lint])"},
		{name: "no node", first: lintFails, node: "", wantErr: "name the node to continue with"},
		{name: "answers 0", budget: "budget: {answers: 0}", first: lintFails, node: "implement", wantErr: "run r1 cannot be answered: its blueprint sets budget.answers to 0"},
		{name: "answers used up", budget: "budget: {answers: 2}", first: lintFails, node: "implement", answers: 2,
			wantErr: "run r1 was answered 2 times, budget.answers 2"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d, bp := newDriver(t, retryLoop("[fail]", c.budget))
			d.apply(runtime.Event{Type: runtime.EvRunStarted, RunID: "r1", Inputs: map[string]any{"task": "x"}})
			d.settle(c.first)
			for i := 0; i < c.answers; i++ {
				if _, err := d.apply(runtime.Event{Type: runtime.EvAnswered, Node: "implement", Feedback: "try again"}); err != nil {
					t.Fatal(err)
				}
				d.settle(lintFails)
			}
			before := len(startsOf(d.events, c.node))
			lintBefore := len(startsOf(d.events, "lint"))
			cmds, err := d.apply(runtime.Event{Type: runtime.EvAnswered, Node: c.node, Feedback: "use the v2 API", By: "ana"})
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("err %v, want %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if st, _ := d.s.Status(); st != runtime.StatusRunning || len(cmds) != 1 {
				t.Fatalf("after the answer: status %s, commands %+v", st, cmds)
			}
			// Attempt numbers keep increasing; the note is the feedback.
			if got := cmds[0]; got.Type != runtime.EvNodeStarted || got.Node != c.node || got.Attempt != before+1 || got.Feedback != "use the v2 API" {
				t.Fatalf("answer started %+v, want %s#%d with the note", got, c.node, before+1)
			}
			// The bounded edge has its full allowance again: lint fails
			// three more times (1 + max 2) before the run is handed off.
			d.settle(lintFails)
			if st, reason := d.s.Status(); st != runtime.StatusHandedOff || !strings.Contains(reason, "exhausted after 2") {
				t.Fatalf("after the answered leg: %s (%s)", st, reason)
			}
			if n := len(startsOf(d.events, "lint")) - lintBefore; n != 3 {
				t.Fatalf("lint ran %d times after the answer, want 3 (a fresh edge allowance)", n)
			}
			// A fresh scheduler reproduces every decision across answers.
			if err := runtime.Replay(bp, d.events); err != nil {
				t.Fatalf("replay across answers: %v", err)
			}
		})
	}
}

// TestSchedulerAnswerRunning: a run that is still running cannot be
// answered; the attempt in flight is left alone.
func TestSchedulerAnswerRunning(t *testing.T) {
	d, _ := newDriver(t, retryLoop("[fail]", ""))
	d.apply(runtime.Event{Type: runtime.EvRunStarted, RunID: "r1", Inputs: map[string]any{"task": "x"}})
	_, err := d.apply(runtime.Event{Type: runtime.EvAnswered, Node: "implement", Feedback: "n"})
	if err == nil || !strings.Contains(err.Error(), "run r1 has not finished") {
		t.Fatalf("answer on a running run: %v", err)
	}
	if f := d.s.InFlight(); f["implement"] != 1 {
		t.Fatalf("in flight after a refused answer: %v", f)
	}
}

// TestSchedulerAnswerBudgets: max_node_runs and tokens count from the
// latest answer, so an answer to a run that ran out of them is not handed
// off again at once.
func TestSchedulerAnswerBudgets(t *testing.T) {
	cases := []struct{ budget, kind string }{
		{"budget: {max_node_runs: 3}", "node_runs"},
		{"budget: {tokens: 250}", "tokens"},
	}
	for _, c := range cases {
		t.Run(c.kind, func(t *testing.T) {
			d, _ := newDriver(t, retryLoop("[fail]", c.budget))
			d.tokens = 100
			d.apply(runtime.Event{Type: runtime.EvRunStarted, RunID: "r1", Inputs: map[string]any{"task": "x"}})
			d.settle(lintFails)
			first := len(startsOf(d.events, "implement")) + len(startsOf(d.events, "lint"))
			if _, err := d.apply(runtime.Event{Type: runtime.EvAnswered, Node: "implement", Feedback: "n"}); err != nil {
				t.Fatal(err)
			}
			d.settle(lintFails)
			last := d.events[len(d.events)-1]
			if last.Type != runtime.EvRunFinished || last.Kind != c.kind {
				t.Fatalf("answered leg ended %+v, want a %s hand-off", last, c.kind)
			}
			if got := len(startsOf(d.events, "implement")) + len(startsOf(d.events, "lint")) - first; got != first {
				t.Fatalf("the answered leg ran %d nodes, the first %d: want the same allowance", got, first)
			}
		})
	}
}
