package runtime

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"time"

	"github.com/sandgate/sandgate/blueprint"
)

// Answer is a person's reply to a handed-off run: Node restarts with Note
// as its feedback. By names who answered (default $USER, then the OS
// user).
type Answer struct {
	Node, Note, By string
}

// CheckSize refuses a note or a name longer than the journal keeps.
// Callers that start the answer elsewhere (the inbox spawns a process)
// check it first, so a refused answer starts and writes nothing.
func (a Answer) CheckSize() error {
	if len(a.Note) > MaxFeedback || len(a.By) > MaxText {
		return fmt.Errorf("answer: the note holds at most %d bytes and the name %d (got %d and %d)", MaxFeedback, MaxText, len(a.Note), len(a.By))
	}
	return nil
}

// Answer continues a handed-off run from its directory, on its workspace as
// the run left it: the journal records the answer (who, when, the note),
// Node starts again with the note as its feedback, and the run goes on as
// Resume would. An answer gives the bounded edges, the node error retries
// and the run budgets (max_node_runs, timeout, tokens, cost) a fresh allowance;
// budget.answers bounds how often a run may be answered. A crash after the
// answer is journaled is resumed like any other (Resume).
func (rt *Runtime) Answer(ctx context.Context, dir string, a Answer) (*Summary, error) {
	if err := a.CheckSize(); err != nil {
		return nil, err
	}
	s, err := rt.lockAndLoad(dir, func(events []Event) (bool, error) {
		if !finished(events) {
			return false, fmt.Errorf("run %s has not finished (status running): only a handed-off run can be answered; wait for it, or resume it if its harness died", filepath.Base(dir))
		}
		return true, nil
	})
	if err != nil {
		return nil, err
	}
	if err := s.sched.CheckAnswer(a.Node); err != nil {
		s.lock.Close()
		return nil, err
	}
	x, err := rt.reopen(ctx, s)
	if err != nil {
		return nil, err
	}
	ev := Event{Type: EvAnswered, Node: a.Node, Feedback: a.Note, By: orDefault(a.By, currentUser()), Time: time.Now()}
	if err := x.input(ev); err != nil {
		return nil, x.abort(err)
	}
	// The hand-off report described the state the answer has left.
	for _, f := range []string{"handoff.json", "handoff.md"} {
		if err := os.Remove(filepath.Join(dir, f)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, x.abort(err)
		}
	}
	return x.loop(ctx)
}

// ErrNotAnswerable is wrapped by Answerable's errors: the run is not
// waiting for an answer.
var ErrNotAnswerable = errors.New("the run is not waiting for an answer")

// Answerable reports why the run in dir cannot be answered now, reading
// its files and writing nothing, so a server can refuse an answer before
// it starts one: the run must have ended handed off with answers left.
// nil does not promise the answer goes through (Answer decides, under the
// run's lock); it means nothing recorded stands against it.
func Answerable(dir string) error {
	sum, err := Summarize(dir)
	if err != nil {
		return err
	}
	if sum.Status != StatusHandedOff {
		return fmt.Errorf("%w: run %s is %s, not handed off; only a handed-off run can be answered", ErrNotAnswerable, sum.RunID, sum.Status)
	}
	var h Handoff
	if readJSON(filepath.Join(dir, "handoff.json"), &h) == nil && h.Answer == "" {
		return fmt.Errorf("%w: run %s has no answers left (budget.answers)", ErrNotAnswerable, sum.RunID)
	}
	return nil
}

// currentUser names the person running the harness.
func currentUser() string {
	if u := os.Getenv("USER"); u != "" {
		return u
	}
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username
	}
	return "unknown"
}

// CheckAnswer reports why the run could not be answered with node, or nil.
func (s *Scheduler) CheckAnswer(node string) error {
	switch {
	case s.status == StatusRunning:
		return fmt.Errorf("run %s has not finished: only a handed-off run can be answered", s.runID)
	case s.status != StatusHandedOff:
		return fmt.Errorf("run %s ended %s (%s): only a handed-off run can be answered", s.runID, s.status, s.reason)
	}
	spec, ok := s.bp.Nodes[node]
	switch {
	case node == "":
		return fmt.Errorf("run %s: name the node to continue with (one of %v)", s.runID, s.workNodes())
	case !ok:
		return fmt.Errorf("run %s: blueprint %s has no node %q%s", s.runID, s.bp.Name, node, blueprint.DidYouMean(node, s.bp.Order))
	case blueprint.IsTerminal(spec.Type):
		return fmt.Errorf("run %s: node %s is a %s node, which only ends a run; answer a node that does work (one of %v)", s.runID, node, spec.Type, s.workNodes())
	case s.bp.Budget.Answers == 0:
		return fmt.Errorf("run %s cannot be answered: its blueprint sets budget.answers to 0", s.runID)
	case s.answers >= s.bp.Budget.Answers:
		return fmt.Errorf("run %s was answered %d times, budget.answers %d", s.runID, s.answers, s.bp.Budget.Answers)
	}
	return nil
}

// answerable reports whether the run ended handed off and may still be
// answered, so its workspace must be kept.
func (s *Scheduler) answerable() bool {
	return s.status == StatusHandedOff && s.answers < s.bp.Budget.Answers
}

// answered reopens a handed-off run: the answered node starts again with
// the note as its feedback under a fresh allowance (edge bounds, error
// retries, node runs, tokens, cost and the timeout count from the answer), while
// attempt numbers keep increasing so every attempt keeps its own record.
func (s *Scheduler) answered(ev Event) ([]Event, error) {
	if err := s.CheckAnswer(ev.Node); err != nil {
		return nil, err
	}
	s.answers++
	s.status, s.reason = StatusRunning, ""
	s.edges, s.errs, s.arrived = map[string]int{}, map[string]int{}, map[string]map[string]bool{}
	s.nodeRuns, s.tokens, s.cost, s.start = 0, 0, 0, ev.Time
	c := &cmds{at: ev.Time}
	s.startNode(c, ev.Node, ev.Feedback, 0)
	return c.out, nil
}

// workNodes lists the nodes an answer may name.
func (s *Scheduler) workNodes() []string {
	var out []string
	for _, id := range s.bp.Order {
		if !blueprint.IsTerminal(s.bp.Nodes[id].Type) {
			out = append(out, id)
		}
	}
	return out
}
