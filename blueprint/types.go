package blueprint

import (
	"regexp"
	"time"

	"gopkg.in/yaml.v3"
)

// Version is the only blueprint format version this package understands.
const Version = 1

// Pos is a position in a blueprint file. Line and Col are 1-based; a zero Pos
// means the position is unknown.
type Pos struct {
	Line int `json:"line"`
	Col  int `json:"col"`
}

// Blueprint is a parsed and validated workflow.
type Blueprint struct {
	// File is the name the blueprint was loaded from, used in diagnostics.
	File        string
	Version     int
	Name        string
	Description string
	Inputs      map[string]*Input
	// InputOrder lists the input names in the order they appear in the file.
	InputOrder []string
	Budget     Budget
	Sandbox    Sandbox
	Start      string
	Nodes      map[string]*Node
	// Order lists the node ids in the order they appear in the file.
	Order []string
	// WorstCaseRuns is an upper bound on node runs derived from edge bounds.
	WorstCaseRuns int
	// Credentials lists the environment variables the nodes use as
	// credentials (their CredentialEnv fields), sorted; the runtime redacts
	// their values.
	Credentials []string
	// Warnings holds problems that do not stop the blueprint from running.
	Warnings Diagnostics
	// Types is the type set the blueprint was validated against
	// (WithTypes). A runtime refuses to build it with a registry other
	// than the one it was loaded through: its nodes were checked against
	// that registry's declarations, not another's.
	Types TypeSet

	// Source is the raw file content, kept for rendering diagnostics later.
	Source []byte
	env    *envSchema
}

// Input is a declared blueprint input, referenced as inputs.<name>.
type Input struct {
	Name        string
	Description string
	Required    bool
	// Type is one of "string", "int", "bool"; it defaults to "string".
	Type    string
	Default any
	// Pattern, for string inputs, is a regular expression the whole value
	// must match; it is checked at load (the default) and when a run
	// starts (the given value). Inputs used in argv commands need one.
	Pattern string
	pattern *regexp.Regexp
	Pos     Pos
}

// Budget holds run-wide caps. Zero values mean "no cap", except Answers.
// Running out of any budget ends the run in the hand-off state. A person's
// answer to a handed-off run (sandgate answer) gives MaxNodeRuns, Timeout,
// Tokens and Cost a fresh allowance, so Answers bounds the whole run's spending
// at (Answers+1) times them.
type Budget struct {
	MaxNodeRuns int
	Timeout     time.Duration
	Tokens      int
	// Cost caps the run's model spending in USD (budget.cost), priced by
	// the operator's price table; 0 means no cap.
	Cost float64
	// Answers is how often a handed-off run may be answered and continued;
	// Parse sets DefaultAnswers when budget.answers is omitted, and 0
	// means the run can never be answered.
	Answers int
	Pos     Pos
}

// DefaultAnswers is budget.answers when a blueprint does not set it.
const DefaultAnswers = 3

// Sandbox holds the blueprint's sandbox settings. The sandbox package
// consumes them; this package only validates their shape.
type Sandbox struct {
	// Network is "none" (the default) or "allowlist".
	Network    string
	AllowHosts []string
	// Env lists the names of host environment variables passed into the box.
	Env []string
	// EnvPos holds the position of each Env entry, for diagnostics.
	EnvPos []Pos
	// Isolation is "full" (the default) or "none"; "none" must also be
	// allowed explicitly by whoever runs the blueprint.
	Isolation string
	// Disk caps, in bytes, what the box may write across its workspace,
	// home, /tmp and caches; zero means the sandbox's default (4 GiB).
	Disk int64
	// Image, when set, names the OCI image whose tree is the box's root
	// instead of the host's (oci:DIR[:TAG], docker-archive:FILE,
	// docker://REF@sha256:…).
	Image    string
	ImagePos Pos
	Pos      Pos
}

// Node is one step of a blueprint.
type Node struct {
	ID          string
	Type        string
	Description string
	// Gate is true when the node's type is declared a gate (NodeType.Gate)
	// in the type set the blueprint was loaded with.
	Gate bool
	// Timeout caps one attempt of the node; zero means no per-node cap.
	Timeout time.Duration
	// Retry re-runs the node when it errors (breaks), not when it fails a
	// gate; gate failures follow the node's edges.
	Retry Retry
	// Needs lists the nodes that must all complete before this one runs
	// (fan-in).
	Needs []string
	// Edges are the node's outgoing edges in evaluation order.
	Edges []*Edge
	// FanOut is true when the node was declared with a list of next nodes,
	// all of which run concurrently.
	FanOut bool
	// Config holds the type-specific fields, decoded to plain Go values
	// (string, int, float64, bool, time.Duration, []string, map[string]any).
	Config map[string]any
	// Templates holds the compiled ${{ }} templates found in Config strings,
	// by field name.
	Templates map[string]*Template
	// Raw is the node's YAML mapping with positions, for node types that
	// decode their configuration themselves.
	Raw *yaml.Node
	Pos Pos
	// File is the blueprint file the node was declared in, so node types
	// can resolve paths relative to it.
	File string
}

// Retry is a per-node policy for transient errors.
type Retry struct {
	Max     int
	Backoff time.Duration
}

// EdgeKind says which key an edge was declared with.
type EdgeKind string

// Edge kinds.
const (
	EdgeNext   EdgeKind = "next"
	EdgeOnPass EdgeKind = "on_pass"
	EdgeOnFail EdgeKind = "on_fail"
	EdgeWhen   EdgeKind = "edges"
)

// Edge is a transition from one node to another.
type Edge struct {
	// ID identifies the edge for bound counting, e.g. "lint.on_fail" or
	// "test.edges[1]".
	ID   string
	Kind EdgeKind
	From string
	To   string
	// When is the edge's condition; nil means always.
	When *Expr
	// Max bounds how often the edge may be taken in one run; zero means
	// unbounded.
	Max int
	// OnExhausted names the node to go to when the bound is exceeded; empty
	// means the run is handed off to a human.
	OnExhausted string
	Pos         Pos
}

// Bounded reports whether the edge has a max.
func (e *Edge) Bounded() bool { return e.Max > 0 }

// Terminal node types built into the format.
const (
	TypeSucceed = "succeed"
	TypeHandoff = "handoff"
	TypeFail    = "fail"
)

// IsTerminal reports whether a node type ends the run.
func IsTerminal(nodeType string) bool {
	return nodeType == TypeSucceed || nodeType == TypeHandoff || nodeType == TypeFail
}
