package runtime

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/sandgate/sandgate/blueprint"
	"github.com/sandgate/sandgate/secrets"
)

// Outcome is a node's verdict.
type Outcome string

// Outcomes. A gate that finds problems returns OutcomeFail, not an error;
// OutcomeHandoff asks for a person (for example an agent that gives up).
const (
	OutcomePass    Outcome = "pass"
	OutcomeFail    Outcome = "fail"
	OutcomeHandoff Outcome = "handoff"
)

// Node is the one interface a node type implements. Run returns an error
// only when the node itself broke (a crash, an unreachable service); the
// per-node retry policy covers those, then the run fails.
type Node interface {
	Run(ctx context.Context, in *Input) (*Result, error)
}

// Input is what a node attempt receives.
type Input struct {
	RunID   string
	NodeID  string
	Attempt int
	// Spec is the node's declaration in the blueprint.
	Spec *blueprint.Node
	// Feedback is what the node that led here said, typically the failing
	// gate's diagnostics on a retry edge.
	Feedback string
	// Scope is the expression state, for rendering the node's templates
	// (see Render). Outputs and attempts are filled only for nodes that
	// have templates.
	Scope *blueprint.Scope
	// Workspace is the directory the node works in.
	Workspace string
	// Started is when the run started, as its journal records it (the
	// run_started event's time): the same on every host and after every
	// resume, so a node that must give the same result when it runs again
	// (git_commit's dates) uses it rather than the clock.
	Started time.Time
	// Budget is the run's budget; with Scope.Run (tokens and cost spent
	// when the attempt started) a node can stop before overspending.
	Budget blueprint.Budget
	// Spend is the run's spending as it happens, parallel attempts'
	// included (nil where the engine keeps no live count): a node that
	// spends money Adds each expense and checks Total before the next.
	Spend *Spend
	// Dir is this attempt's own directory for logs and artifacts. It is
	// not created in advance (creating files is the costliest thing an
	// idle engine does): call MkDir before writing there.
	Dir    string
	Logger *slog.Logger
	// Redactor removes the harness's credentials from text; nodes pass
	// everything they write or publish through it (WriteFile does).
	Redactor *secrets.Redactor
	// Services carries embedder-provided dependencies (a sandbox, a model
	// client); nodes look up what they need through typed keys
	// (ServiceKey.Get).
	Services Services
}

// Render renders one of the node's templated fields, or returns the plain
// value when the field has no template.
func (in *Input) Render(field string) (string, error) {
	if t, ok := in.Spec.Templates[field]; ok {
		return t.Render(in.Scope)
	}
	s, _ := in.Spec.Config[field].(string)
	return s, nil
}

// WriteFile writes a file into the attempt directory, creating it, with
// credentials redacted.
func (in *Input) WriteFile(name string, data []byte) error {
	dir, err := in.MkDir()
	if err != nil {
		return err
	}
	if strings.HasSuffix(name, ".json") {
		data = in.Redactor.JSON(data)
	} else {
		data = in.Redactor.Bytes(data)
	}
	return os.WriteFile(filepath.Join(dir, name), data, 0o644)
}

// MkDir creates the attempt directory and returns its path.
func (in *Input) MkDir() (string, error) {
	return in.Dir, os.MkdirAll(in.Dir, 0o755)
}

// Result is a node attempt's verdict and what it publishes.
type Result struct {
	Outcome Outcome
	// Outputs become outputs.<node>.<field> in expressions; keys should be
	// those the node type declares.
	Outputs map[string]any
	// Feedback is handed to the node an edge leads to.
	Feedback string
	// Artifacts are paths (relative to the attempt directory) worth keeping.
	Artifacts []string
	// Tokens spent by this attempt, counted against the run's budget.
	// A node that breaks after spending returns its Result (with Tokens
	// and Cost) beside the error, so the spend is still counted.
	Tokens int
	// Cost is what this attempt's model calls cost in USD, counted
	// against budget.cost.
	Cost float64
	// Reason explains a hand-off or a failure in one line.
	Reason string
	// Details are a gate node's structured findings (its type declares
	// blueprint.NodeType.Gate), recorded with its verdict. They must
	// marshal to JSON; a gate whose details do not is recorded as failed.
	Details map[string]any
}

// Factory builds a node from its declaration. It runs once per run, before
// any node executes, so configuration mistakes surface early.
type Factory func(spec *blueprint.Node) (Node, error)

// Type is a node type: its declaration for the validator and its factory.
type Type struct {
	Spec blueprint.NodeType
	New  Factory
}

// Decorator wraps the factory of a node type; see Registry.Decorate.
type Decorator func(spec blueprint.NodeType, f Factory) Factory

// Registry maps node type names to types. The embedder owns it: there is no
// global registry.
type Registry struct {
	types      map[string]Type
	loadOpts   []blueprint.Option
	decorators []Decorator
}

var _ blueprint.TypeSet = (*Registry)(nil)

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{types: map[string]Type{}} }

// Register adds a node type; registering a name twice or a built-in
// terminal name is an error.
func (r *Registry) Register(t Type) error {
	name := t.Spec.Name
	switch {
	case name == "":
		return fmt.Errorf("register node type: empty name")
	case blueprint.IsTerminal(name):
		return fmt.Errorf("register node type %q: the name is a built-in terminal", name)
	case t.New == nil:
		return fmt.Errorf("register node type %q: no factory", name)
	case t.Spec.Gate && t.Spec.Terminal:
		return fmt.Errorf("register node type %q: a terminal type cannot be a gate", name)
	}
	if _, dup := r.types[name]; dup {
		return fmt.Errorf("register node type %q: already registered", name)
	}
	r.types[name] = t
	return nil
}

// NodeType implements blueprint.TypeSet.
func (r *Registry) NodeType(name string) (blueprint.NodeType, bool) {
	t, ok := r.types[name]
	return t.Spec, ok
}

// NodeTypeNames implements blueprint.TypeSet.
func (r *Registry) NodeTypeNames() []string {
	out := make([]string, 0, len(r.types))
	for n := range r.types {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Decorate wraps the factory of every type, those registered later
// included, with d; decorators apply in the order they were added, the
// last outermost. The built-in nodes use it to run every gate type on a
// quiesced workspace and record its verdict against the change it saw.
func (r *Registry) Decorate(d Decorator) { r.decorators = append(r.decorators, d) }

// AddLoadOptions adds options every Load uses (resumes included), such as
// the operator's blueprint.WithAllowEnv.
func (r *Registry) AddLoadOptions(opts ...blueprint.Option) { r.loadOpts = append(r.loadOpts, opts...) }

// Load parses and validates a blueprint file against this registry's types,
// with the registry's load options and then opts.
func (r *Registry) Load(path string, opts ...blueprint.Option) (*blueprint.Blueprint, error) {
	return blueprint.Load(path, r.options(opts)...)
}

// Parse is Load for a blueprint held in memory.
func (r *Registry) Parse(name string, src []byte, opts ...blueprint.Option) (*blueprint.Blueprint, error) {
	return blueprint.Parse(name, src, r.options(opts)...)
}

func (r *Registry) options(extra []blueprint.Option) []blueprint.Option {
	all := append([]blueprint.Option{blueprint.WithTypes(r)}, r.loadOpts...)
	return append(all, extra...)
}

// build instantiates every non-terminal node of a blueprint.
func (r *Registry) build(bp *blueprint.Blueprint) (map[string]Node, error) {
	// Only registries are compared: other type sets (a MapTypes, or none)
	// may be uncomparable, and their nodes meet each factory's own checks.
	if other, ok := bp.Types.(*Registry); ok && other != r {
		return nil, fmt.Errorf("%s: the blueprint was loaded through another node type registry than the runtime's: load it with this runtime's Registry", bp.File)
	}
	out := map[string]Node{}
	for _, id := range bp.Order {
		spec := bp.Nodes[id]
		if blueprint.IsTerminal(spec.Type) {
			continue
		}
		t, ok := r.types[spec.Type]
		if !ok {
			return nil, fmt.Errorf("node %s: type %q is not registered", id, spec.Type)
		}
		f := t.New
		for _, d := range r.decorators {
			f = d(t.Spec, f)
		}
		n, err := f(spec)
		if err != nil {
			return nil, fmt.Errorf("%s:%d:%d: nodes.%s: %w", bp.File, spec.Pos.Line, spec.Pos.Col, id, err)
		}
		out[id] = n
	}
	return out, nil
}
