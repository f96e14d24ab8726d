package temporal

import (
	"encoding/json"
	"fmt"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/sandgate/sandgate/runtime"
)

// DefaultContinueAfter is the history length (events) past which a run
// continues as new: a fifth of Temporal's 51,200-event limit, so a run
// waiting for its parallel attempts to drain has room to spare.
const DefaultContinueAfter = 10_000

// versionContinue names the change that brought continue-as-new. Runs
// started before it (their history has no marker) never continue as new:
// holding their node launches back would not replay.
const versionContinue = "continue-as-new"

// Carried is what a run hands to its continuation: the journal (the
// scheduler is rebuilt from it, as a resumed local run's is), where the
// workspace is, and what was in flight between the two.
type Carried struct {
	Events []runtime.Event
	Acked  int
	Host   openResult
	Status Status
	// Launch are node attempts the scheduler started (they are in Events)
	// whose activities had not been scheduled yet.
	Launch []runtime.Event
	// DeadlineAt is when budget.timeout ends the current stretch (zero:
	// no timeout).
	DeadlineAt time.Time
	// Signals are answer and abandon signals that arrived while the run
	// was busy and that the continuation still has to read.
	Signals []CarriedSignal
	// Change and NoChange are the run's recorded change (movewf.go).
	Change   *Change `json:",omitempty"`
	NoChange string  `json:",omitempty"`
}

// CarriedSignal is one signal the run had not read yet.
type CarriedSignal struct {
	Name   string
	Answer Answer
	Why    string
}

// holding reports whether the run's history has grown past its bound:
// new node activities then wait, and once none runs the run continues as
// new (an activity in flight would be lost by the continuation).
func (r *run) holding(ctx workflow.Context) bool {
	return r.mayContinue && r.status.Status == runtime.StatusRunning &&
		workflow.GetInfo(ctx).GetCurrentHistoryLength() >= r.in.ContinueAfter
}

// launchHeld starts the attempts the last input started, unless the run is
// holding them for its continuation.
func (r *run) launchHeld(ctx workflow.Context) {
	if r.holding(ctx) {
		return
	}
	for _, c := range r.launches {
		r.launch(ctx, c)
	}
	r.launches = nil
}

// maxCarry bounds the continuation's input. Temporal refuses a payload
// over 2 MB (its blob size limit): the continue-as-new command is then
// rejected, the workflow task fails and is retried for ever, and the run
// hangs without a word. The journal is carried whole, so a run with some
// thousand attempts (or long feedback) reaches this.
const maxCarry = 1_500_000

// continueAsNew ends this execution with a continuation carrying the run;
// when the run is too large to carry it hands the run off instead (and
// returns nil): an answer then goes on in this execution.
func (r *run) continueAsNew(ctx workflow.Context) error {
	// Signals sent to this execution and not read yet would be lost.
	for {
		var a Answer
		if !workflow.GetSignalChannel(ctx, SignalAnswer).ReceiveAsync(&a) {
			break
		}
		r.signals = append(r.signals, CarriedSignal{Name: SignalAnswer, Answer: a})
	}
	for {
		var why string
		if !workflow.GetSignalChannel(ctx, SignalAbandon).ReceiveAsync(&why) {
			break
		}
		r.signals = append(r.signals, CarriedSignal{Name: SignalAbandon, Why: why})
	}
	in := r.in
	in.Carried = &Carried{Events: r.events, Acked: r.acked, Host: r.host, Status: r.status, Launch: r.launches,
		DeadlineAt: r.deadlineAt, Signals: r.signals, Change: r.change, NoChange: r.noChange}
	// The default data converter encodes the input as this JSON.
	if b, err := json.Marshal(in); err != nil || len(b) > maxCarry {
		r.mayContinue = false
		r.input(ctx, runtime.Event{Type: runtime.EvBudgetExhausted, Kind: "journal_size",
			Reason: fmt.Sprintf("the run (%d events, %d bytes with its journal) is too large to carry into a continue-as-new "+
				"(at most %d bytes; Temporal refuses payloads over 2 MB): an answer goes on without continuing as new", len(r.events), len(b), maxCarry)}, nil)
		return nil
	}
	return workflow.NewContinueAsNewError(ctx, WorkflowName, in)
}

// resume takes a carried run up: the scheduler replays the journal's
// inputs, the timeout timer runs to its old end, held attempts launch.
func (r *run) resume(ctx workflow.Context, c *Carried) {
	r.events, r.acked, r.host, r.status, r.signals = c.Events, c.Acked, c.Host, c.Status, c.Signals
	r.answers = c.Status.Answers
	r.change, r.noChange = c.Change, c.NoChange
	for _, ev := range c.Events {
		if ev.Type.IsInput() {
			_, _ = r.sched.Apply(ev) // the commands are in the journal already
		}
	}
	if !c.DeadlineAt.IsZero() {
		r.startTimer(ctx, c.DeadlineAt)
	}
	for _, ev := range c.Launch {
		r.launch(ctx, ev)
	}
}

// nextSignal returns a carried signal not read yet, if any.
func (r *run) nextSignal() (CarriedSignal, bool) {
	if len(r.signals) == 0 {
		return CarriedSignal{}, false
	}
	s := r.signals[0]
	r.signals = r.signals[1:]
	return s, true
}
