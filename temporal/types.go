package temporal

import (
	"time"

	"github.com/sandgate/sandgate/runtime"
)

// Names the workflow, its activities, signals and queries are registered
// under. They are part of running workflows' histories: renaming one
// breaks every run in flight.
const (
	WorkflowName   = "sandgate.run"
	ActivityOpen   = "sandgate.open"
	ActivityNode   = "sandgate.node"
	ActivityFinish = "sandgate.finish"
	SignalAnswer   = "answer"
	SignalAbandon  = "abandon"
	QueryStatus    = "status"
	QueryEvents    = "events"
)

// Search attributes a run keeps up to date when RunInput.SearchAttributes
// is set (the namespace must have them registered as Keyword).
const (
	AttrStatus     = "SandgateStatus"
	AttrBlueprint  = "SandgateBlueprint"
	AttrRepository = "SandgateRepository"
)

// DefaultHandoffWait is how long a handed-off run waits for an answer.
const DefaultHandoffWait = 7 * 24 * time.Hour

// RunInput starts a run. The blueprint travels as its source so every
// replay parses the same text, whatever the worker's files say now.
type RunInput struct {
	// File names the blueprint (for messages); Source is its text.
	File   string
	Source []byte
	Inputs map[string]any
	// Repo and Rev are the repository (a path on the workers) and the
	// commit the run's workspace is made from; Rev empty means HEAD.
	Repo string
	Rev  string
	// Labels are the starter's names for the run (runtime.CheckLabels),
	// kept in the run's meta.json and run.json as a local run's and in
	// the workflow's memo, so the inbox shows and filters on them.
	Labels runtime.Labels
	// HandoffWait bounds how long a handed-off run waits for an answer
	// (default DefaultHandoffWait).
	HandoffWait time.Duration
	// HostTimeout is how long an activity may wait on the run's host
	// queue before the host counts as lost (default 1 minute).
	HostTimeout time.Duration
	// HeartbeatTimeout bounds the silence of a running node attempt
	// (default 20 s); a dead host is noticed after it.
	HeartbeatTimeout time.Duration
	// SearchAttributes keeps SandgateStatus up to date; otherwise the
	// status goes to the memo.
	SearchAttributes bool
	// ContinueAfter bounds the workflow's history (events, default
	// DefaultContinueAfter): past it the run continues as new.
	ContinueAfter int
	// Carried is set by the run itself when it continues as new.
	Carried *Carried `json:",omitempty"`
}

// Answer is a person's reply to a handed-off run (the answer signal).
type Answer struct {
	Node string `json:"node"`
	Note string `json:"note"`
	By   string `json:"by"`
}

// Status is what the status query and the workflow result report.
type Status struct {
	RunID     string         `json:"run_id"`
	Blueprint string         `json:"blueprint"`
	Labels    runtime.Labels `json:"labels,omitempty"`
	Status    runtime.Status `json:"status"`
	Kind      string         `json:"kind,omitempty"`
	Reason    string         `json:"reason,omitempty"`
	// Host is the worker host holding the workspace; Dir the run
	// directory there.
	Host     string `json:"host,omitempty"`
	Dir      string `json:"dir,omitempty"`
	NodeRuns int    `json:"node_runs"`
	// Verdict is the latest node result in one line.
	Verdict string `json:"verdict,omitempty"`
	// Waiting is set while a handed-off run waits for an answer.
	Waiting bool `json:"waiting,omitempty"`
	// Note tells what happened after the run's end: an answer refused,
	// the record left incomplete by a lost host, an abandoned hand-off.
	Note    string `json:"note,omitempty"`
	Answers int    `json:"answers,omitempty"`
	// Events is the number of journal events so far.
	Events int `json:"events"`
}

// openInput asks a worker to prepare a run's workspace.
type openInput struct {
	RunID string
	Run   RunInput
	// Move, when set, rebuilds a run whose host was lost (move.go).
	Move *moveInput `json:",omitempty"`
}

// openResult says where the run's workspace is.
type openResult struct {
	Queue string
	Host  string
	Dir   string
	// Info are the events the host wants journaled (isolation layers).
	Info []runtime.Event
}

// nodeInput runs one node attempt; Events are journaled first.
type nodeInput struct {
	RunID    string
	Repo     string
	Rev      string
	Events   []runtime.Event
	Node     string
	Attempt  int
	Feedback string
	// Have is the fingerprint of the change the workflow recorded last:
	// the host sends the change back only when it differs.
	Have string `json:",omitempty"`
	// Check asks the host to refuse a copy of the workspace that may hold
	// a killed attempt's writes (reopened from disk, or an activity
	// retry's) unless it is the recorded one (diverge.go). Workflows set
	// it from versionDiverged on, while their record holds the latest
	// change (no NoChange).
	Check bool `json:",omitempty"`
}

// nodeResult is the attempt's node_finished event and the journal's
// high-water mark.
type nodeResult struct {
	Event     runtime.Event
	Journaled int
	// Change is the workspace's change right after the attempt, taken by
	// the harness (nil: the same as Have); NoChange says why none could
	// be taken, and the run cannot move then.
	Change   *Change `json:",omitempty"`
	NoChange string  `json:",omitempty"`
}

// finishInput wraps a finished run up on its host.
type finishInput struct {
	RunID  string
	Repo   string
	Rev    string
	Events []runtime.Event
}

type finishResult struct {
	Journaled int
	Dir       string
}
