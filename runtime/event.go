package runtime

import "time"

// EventType names a journal entry.
type EventType string

// Input events are facts the scheduler consumes; command events are the
// decisions it makes. Both are journaled.
const (
	// Inputs.
	EvRunStarted      EventType = "run_started"
	EvNodeFinished    EventType = "node_finished"
	EvBudgetExhausted EventType = "budget_exhausted"
	EvCancelRequested EventType = "cancel_requested"
	// EvAnswered is a person's answer to a handed-off run: Node restarts
	// with Feedback (the note); By and Time say who answered and when.
	EvAnswered EventType = "answered"
	// EvWorkspaceLost says the host holding the run's workspace is gone
	// (a worker of a durable engine died): the run is handed off with
	// Reason, since continuing elsewhere would work without its change.
	EvWorkspaceLost EventType = "workspace_lost"
	// Commands.
	EvNodeStarted  EventType = "node_started"
	EvNodeCanceled EventType = "node_canceled"
	EvEdgeTaken    EventType = "edge_taken"
	EvRunFinished  EventType = "run_finished"
	// Information only.
	EvRunResumed  EventType = "run_resumed"
	EvEnvironment EventType = "environment"
	// EvRunClosed ends the journal once the harness has wrapped up after
	// the last node (stopping nodes, the hand-off diff, tearing the box
	// down); DurationMS is that time, so no part of a run goes unreported.
	// Its Cost is what attempts canceled before they finished spent (they
	// journal no node_finished), so no spending goes unreported either.
	EvRunClosed EventType = "run_closed"
)

// IsInput reports whether the scheduler consumes this event type.
func (t EventType) IsInput() bool {
	switch t {
	case EvRunStarted, EvNodeFinished, EvBudgetExhausted, EvCancelRequested, EvAnswered, EvWorkspaceLost:
		return true
	}
	return false
}

// Status is a run's terminal state.
type Status string

// Run statuses.
const (
	StatusRunning   Status = "running"
	StatusSucceeded Status = "succeeded"
	StatusHandedOff Status = "handed_off"
	StatusFailed    Status = "failed"
	StatusCanceled  Status = "canceled"
)

// Event is one line of events.jsonl. Fields are filled per type.
type Event struct {
	Seq  int       `json:"seq"`
	Time time.Time `json:"time"`
	Type EventType `json:"type"`

	RunID     string         `json:"run_id,omitempty"`
	Blueprint string         `json:"blueprint,omitempty"`
	Inputs    map[string]any `json:"inputs,omitempty"`

	Node     string         `json:"node,omitempty"`
	Attempt  int            `json:"attempt,omitempty"`
	Outcome  Outcome        `json:"outcome,omitempty"`
	Outputs  map[string]any `json:"outputs,omitempty"`
	Feedback string         `json:"feedback,omitempty"`
	Error    string         `json:"error,omitempty"`
	Tokens   int            `json:"tokens,omitempty"`
	// Cost is what the attempt's model calls cost, in USD.
	Cost       float64  `json:"cost,omitempty"`
	DurationMS int64    `json:"duration_ms,omitempty"`
	Artifacts  []string `json:"artifacts,omitempty"`
	// TimedOut says the runtime stopped the attempt at its node's
	// timeout (node_finished): its fail is the runtime's, not the node's.
	// Absent in journals written before it, which read as not timed out.
	TimedOut bool `json:"timed_out,omitempty"`

	Edge string `json:"edge,omitempty"`
	To   string `json:"to,omitempty"`
	// Count is how often a bounded edge has now been taken.
	Count int `json:"count,omitempty"`
	// Delay asks the runner to wait before starting a node (retry backoff).
	DelayMS int64 `json:"delay_ms,omitempty"`

	Status Status `json:"status,omitempty"`
	Reason string `json:"reason,omitempty"`
	// Kind names the budget that ran out, or the hand-off cause.
	Kind string `json:"kind,omitempty"`
	// Layers describes the run's isolation (environment events).
	Layers []string `json:"layers,omitempty"`
	// By names who answered a handed-off run (answered events).
	By string `json:"by,omitempty"`
}
