package runtime

import (
	"fmt"
	"sort"
	"time"

	"github.com/sandgate/sandgate/blueprint"
)

// Scheduler decides what happens next in a run. It is a pure state machine:
// Apply takes an input event and returns command events, with no I/O, no
// clock and no randomness, so replaying a journal reproduces every decision.
type Scheduler struct {
	bp       *blueprint.Blueprint
	runID    string
	start    time.Time
	inputs   map[string]any
	outputs  map[string]map[string]any
	attempts map[string]int
	edges    map[string]int
	inflight map[string]int
	errs     map[string]int
	arrived  map[string]map[string]bool
	feedback map[string]string
	nodeRuns int
	tokens   int
	cost     float64
	status   Status
	reason   string
	// answers counts the answers the run has had (see answer.go).
	answers int
}

// NewScheduler returns a scheduler for a validated blueprint.
func NewScheduler(bp *blueprint.Blueprint) *Scheduler {
	return &Scheduler{bp: bp, outputs: map[string]map[string]any{}, attempts: map[string]int{},
		edges: map[string]int{}, inflight: map[string]int{}, errs: map[string]int{},
		arrived: map[string]map[string]bool{}, feedback: map[string]string{}, status: StatusRunning}
}

// Status returns the run's state and, once finished, the reason.
func (s *Scheduler) Status() (Status, string) { return s.status, s.reason }

// InFlight lists the nodes started and not yet finished, with attempts.
func (s *Scheduler) InFlight() map[string]int {
	out := make(map[string]int, len(s.inflight))
	for k, v := range s.inflight {
		out[k] = v
	}
	return out
}

// Snapshot returns a copy of the expression state that another goroutine
// may read while the scheduler moves on. Node outputs are replaced, never
// mutated, so copying the top-level maps is enough.
func (s *Scheduler) Snapshot(at time.Time, feedback string) *blueprint.Scope {
	sc := s.Scope(at, feedback)
	sc.Outputs = make(map[string]map[string]any, len(s.outputs))
	for k, v := range s.outputs {
		sc.Outputs[k] = v
	}
	sc.Attempts = make(map[string]int, len(s.attempts))
	for k, v := range s.attempts {
		sc.Attempts[k] = v
	}
	return sc
}

// Scope returns the live expression state; only the scheduler's own
// goroutine may read it.
func (s *Scheduler) Scope(at time.Time, feedback string) *blueprint.Scope {
	return &blueprint.Scope{Inputs: s.inputs, Outputs: s.outputs, Attempts: s.attempts, Feedback: feedback,
		Run: s.runInfo(at)}
}

// runInfo is run.* at a time: what the run has spent so far.
func (s *Scheduler) runInfo(at time.Time) blueprint.RunInfo {
	return blueprint.RunInfo{Elapsed: at.Sub(s.start), Tokens: s.tokens, NodeRuns: s.nodeRuns, Cost: s.cost}
}

// Apply consumes one input event and returns the commands that follow.
func (s *Scheduler) Apply(ev Event) ([]Event, error) {
	if !ev.Type.IsInput() {
		return nil, fmt.Errorf("scheduler: %s is not an input event", ev.Type)
	}
	if ev.Type == EvAnswered {
		return s.answered(ev)
	}
	if s.status != StatusRunning {
		return nil, nil
	}
	c := &cmds{at: ev.Time}
	switch ev.Type {
	case EvRunStarted:
		s.runID, s.start, s.inputs = ev.RunID, ev.Time, withDefaults(s.bp, ev.Inputs)
		s.activate(c, s.bp.Start, "", "")
	case EvNodeFinished:
		s.finished(c, ev)
	case EvBudgetExhausted:
		s.finish(c, StatusHandedOff, ev.Kind, fmt.Sprintf("budget exhausted: %s", ev.Reason))
	case EvCancelRequested:
		s.finish(c, StatusCanceled, "canceled", orDefault(ev.Reason, "canceled"))
	case EvWorkspaceLost:
		s.finish(c, StatusHandedOff, "workspace_lost", orDefault(ev.Reason, "the run's workspace was lost"))
	}
	if s.status == StatusRunning && len(s.inflight) == 0 {
		s.finish(c, StatusFailed, "stuck", "no node is running and none can start: "+s.waiting())
	}
	return c.out, nil
}

// cmds accumulates commands stamped with the input event's time.
type cmds struct {
	at  time.Time
	out []Event
}

func (c *cmds) add(e Event) {
	e.Time = c.at
	c.out = append(c.out, e)
}

func (s *Scheduler) finished(c *cmds, ev Event) {
	if s.inflight[ev.Node] != ev.Attempt || ev.Attempt == 0 {
		return // a canceled attempt reporting late
	}
	delete(s.inflight, ev.Node)
	s.tokens += ev.Tokens
	s.cost += ev.Cost
	spec := s.bp.Nodes[ev.Node]
	if ev.Error != "" && s.overBudget(c) {
		return // a broken attempt's spend counts before any retry
	}
	if ev.Error != "" {
		s.errs[ev.Node]++
		if n := s.errs[ev.Node]; n <= spec.Retry.Max {
			delay := spec.Retry.Backoff << (n - 1)
			s.startNode(c, ev.Node, s.feedback[ev.Node], delay)
			return
		}
		s.finish(c, StatusFailed, "node_error", fmt.Sprintf("node %s broke after %d attempt(s): %s", ev.Node, s.errs[ev.Node], ev.Error))
		return
	}
	s.errs[ev.Node] = 0
	out := map[string]any{}
	for k, v := range ev.Outputs {
		out[k] = v
	}
	out["outcome"] = string(ev.Outcome)
	s.outputs[ev.Node] = out
	if s.overBudget(c) {
		return
	}
	if ev.Outcome == OutcomeHandoff {
		s.finish(c, StatusHandedOff, "node", fmt.Sprintf("node %s asked for a person: %s", ev.Node, orDefault(ev.Reason, "no reason given")))
		return
	}
	chosen, err := s.choose(spec, ev)
	if err != nil {
		s.finish(c, StatusFailed, "edge_error", err.Error())
		return
	}
	for _, e := range chosen {
		if s.status != StatusRunning {
			return
		}
		s.take(c, e, ev.Feedback)
	}
}

// overBudget ends the run handed off once its tokens or cost pass the
// budget, and says whether it did.
func (s *Scheduler) overBudget(c *cmds) bool {
	if b := s.bp.Budget.Tokens; b > 0 && s.tokens > b {
		s.finish(c, StatusHandedOff, "tokens", fmt.Sprintf("budget exhausted: %d tokens used, budget %d", s.tokens, b))
		return true
	}
	if b := s.bp.Budget.Cost; b > 0 && s.cost > b {
		s.finish(c, StatusHandedOff, "cost", fmt.Sprintf("budget exhausted: $%.4f spent, budget $%.2f", s.cost, b))
		return true
	}
	return false
}

// choose picks the edges to follow from a finished node.
func (s *Scheduler) choose(spec *blueprint.Node, ev Event) ([]*blueprint.Edge, error) {
	if spec.FanOut {
		return spec.Edges, nil
	}
	scope := s.Scope(ev.Time, ev.Feedback)
	scope.Outcome = string(ev.Outcome)
	for _, e := range spec.Edges {
		switch e.Kind {
		case blueprint.EdgeNext:
			return []*blueprint.Edge{e}, nil
		case blueprint.EdgeOnPass, blueprint.EdgeOnFail:
			if (e.Kind == blueprint.EdgeOnPass) == (ev.Outcome == OutcomePass) {
				return []*blueprint.Edge{e}, nil
			}
		case blueprint.EdgeWhen:
			if e.When == nil {
				return []*blueprint.Edge{e}, nil
			}
			ok, err := e.When.Eval(scope)
			if err != nil {
				return nil, fmt.Errorf("node %s: %w", spec.ID, err)
			}
			if ok {
				return []*blueprint.Edge{e}, nil
			}
		}
	}
	return nil, fmt.Errorf("node %s (outcome %s): no edge applies", spec.ID, ev.Outcome)
}

// take follows one edge, enforcing its bound.
func (s *Scheduler) take(c *cmds, e *blueprint.Edge, feedback string) {
	to := e.To
	if e.Bounded() {
		if s.edges[e.ID] >= e.Max {
			if e.OnExhausted == "" {
				s.finish(c, StatusHandedOff, "edge", fmt.Sprintf("retry edge %s exhausted after %d attempt(s)", e, e.Max))
				return
			}
			c.add(Event{Type: EvEdgeTaken, Node: e.From, Edge: e.ID + ".on_exhausted", To: e.OnExhausted})
			s.activate(c, e.OnExhausted, e.From, feedback)
			return
		}
		s.edges[e.ID]++
		// A retry loop restarts work: siblings still running in a parallel
		// section would act on a state that is about to change.
		s.cancelInflight(c)
		s.arrived = map[string]map[string]bool{}
	}
	c.add(Event{Type: EvEdgeTaken, Node: e.From, Edge: e.ID, To: to, Count: s.edges[e.ID]})
	s.activate(c, to, e.From, feedback)
}

// activate makes a node ready: terminals end the run, fan-in nodes wait for
// all they need, others start.
func (s *Scheduler) activate(c *cmds, id, from, feedback string) {
	spec := s.bp.Nodes[id]
	switch spec.Type {
	case blueprint.TypeSucceed:
		s.finish(c, StatusSucceeded, "succeed", fmt.Sprintf("reached %s", id))
		return
	case blueprint.TypeHandoff, blueprint.TypeFail:
		st := map[string]Status{blueprint.TypeHandoff: StatusHandedOff, blueprint.TypeFail: StatusFailed}[spec.Type]
		reason, _ := spec.Config["reason"].(string)
		s.finish(c, st, spec.Type, fmt.Sprintf("reached %s: %s", id, orDefault(reason, "no reason given")))
		return
	}
	if len(spec.Needs) > 0 {
		if s.arrived[id] == nil {
			s.arrived[id] = map[string]bool{}
		}
		s.arrived[id][from] = true
		for _, need := range spec.Needs {
			if !s.arrived[id][need] {
				return
			}
		}
		delete(s.arrived, id)
	}
	if _, running := s.inflight[id]; running {
		return // already running: this activation joins that run
	}
	s.startNode(c, id, feedback, 0)
}

func (s *Scheduler) startNode(c *cmds, id, feedback string, delay time.Duration) {
	if max := s.bp.Budget.MaxNodeRuns; max > 0 && s.nodeRuns >= max {
		s.finish(c, StatusHandedOff, "node_runs", fmt.Sprintf("budget exhausted: %d node runs, max_node_runs %d", s.nodeRuns, max))
		return
	}
	s.attempts[id]++
	s.nodeRuns++
	s.inflight[id] = s.attempts[id]
	s.feedback[id] = feedback
	c.add(Event{Type: EvNodeStarted, Node: id, Attempt: s.attempts[id], Feedback: feedback, DelayMS: delay.Milliseconds()})
}

func (s *Scheduler) cancelInflight(c *cmds) {
	for _, id := range sortedIDs(s.inflight) {
		c.add(Event{Type: EvNodeCanceled, Node: id, Attempt: s.inflight[id]})
		delete(s.inflight, id)
	}
}

func (s *Scheduler) finish(c *cmds, st Status, kind, reason string) {
	s.cancelInflight(c)
	s.status, s.reason = st, reason
	c.add(Event{Type: EvRunFinished, Status: st, Kind: kind, Reason: reason})
}

func (s *Scheduler) waiting() string {
	if len(s.arrived) == 0 {
		return "nothing is waiting"
	}
	ids := make([]string, 0, len(s.arrived))
	for id := range s.arrived {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return fmt.Sprintf("%v wait for nodes that will not arrive", ids)
}

func sortedIDs(m map[string]int) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// withDefaults fills declared input defaults.
func withDefaults(bp *blueprint.Blueprint, in map[string]any) map[string]any {
	out := map[string]any{}
	for _, name := range bp.InputOrder {
		if d := bp.Inputs[name].Default; d != nil {
			out[name] = d
		}
	}
	for k, v := range in {
		out[k] = v
	}
	return out
}
