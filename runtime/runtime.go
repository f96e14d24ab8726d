package runtime

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
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

// Observer is told about every journaled event, in order, from the run's
// own goroutine; it must not block for long.
type Observer interface {
	Event(ev Event)
}

// ObserverFunc adapts a function to Observer.
type ObserverFunc func(Event)

// Event implements Observer.
func (f ObserverFunc) Event(ev Event) { f(ev) }

// Runtime runs blueprints. The zero value is not usable; set Registry.
type Runtime struct {
	Registry *Registry
	// RunsDir holds one directory per run (default .sandgate/runs).
	RunsDir string
	// Observer, when set, sees every event.
	Observer Observer
	// Logger receives one line per node attempt (default: discard).
	Logger *slog.Logger
	// Services are handed to every node in Input.Services.
	Services Services
	// NoSync skips fsync at node boundaries. Only for benchmarks and
	// throwaway runs: a crash may then lose the journal's tail.
	NoSync bool
	// CancelPoll is how often the run looks for an external cancel request
	// (default 100ms).
	CancelPoll time.Duration
	// Prepare, when set, builds each run's environment (a sandboxed
	// workspace, services) once the run directory exists; on resume it is
	// called again with resume true and must pick up the same workspace.
	Prepare Prepare
	// Tracing, when set, provides each run's tracer (see package
	// runtime/telemetry for trace.json and OTLP export).
	Tracing Tracing
	// Metrics, when set, gives each run an observer of its events and a
	// flush called when the run ends (see package runtime/telemetry for
	// OTLP metrics).
	Metrics Metrics
	// Grace is how long finished runs wait for canceled nodes to return
	// (default 10s).
	Grace time.Duration
	// Secrets names further harness environment variables whose values are
	// credentials (an agent's key under an unusual name). Every run redacts
	// these, the blueprint's credential variables and every variable whose
	// name looks like a credential from all it writes (see package secrets).
	Secrets []string
}

// RunOptions are the per-run parameters.
type RunOptions struct {
	Inputs map[string]any
	// Workspace is the directory nodes work in.
	Workspace string
	// RunID names the run directory (default: time-stamped random id).
	RunID string
	// Settings are what the engine started the run with (its model, the
	// operator's allowances: names, never secret values), recorded in
	// meta.json, credentials redacted, so an answer or a resume can carry
	// the run on as it began (ReadSettings). It must marshal to JSON.
	Settings any
	// Labels are the starter's names for the run (CheckLabels), kept in
	// meta.json and run.json.
	Labels Labels
}

// meta is saved beside the journal so a run can be resumed from its
// directory alone.
type meta struct {
	RunID     string          `json:"run_id"`
	Blueprint string          `json:"blueprint"`
	Workspace string          `json:"workspace"`
	Settings  json.RawMessage `json:"settings,omitempty"`
	Labels    Labels          `json:"labels,omitempty"`
}

// ReadSettings reads the run's RunOptions.Settings in dir into v; false
// when the run recorded none.
func ReadSettings(dir string, v any) (bool, error) {
	var m meta
	if err := readJSON(filepath.Join(dir, "meta.json"), &m); err != nil {
		return false, err
	}
	if len(m.Settings) == 0 || string(m.Settings) == "null" {
		return false, nil
	}
	if err := json.Unmarshal(m.Settings, v); err != nil {
		return false, fmt.Errorf("%s: meta.json: settings: %w", dir, err)
	}
	return true, nil
}

// Run starts a new run and blocks until it ends. A run that ends handed
// off, failed or canceled is not an error: check Summary.Status. Errors mean
// the run could not be carried out (bad inputs, unwritable run directory,
// a blueprint loaded through a registry other than rt.Registry).
func (rt *Runtime) Run(ctx context.Context, bp *blueprint.Blueprint, opts RunOptions) (*Summary, error) {
	validateStart := time.Now()
	inputs, err := checkInputs(bp, opts.Inputs)
	if err != nil {
		return nil, err
	}
	if err := CheckLabels(opts.Labels); err != nil {
		return nil, err
	}
	nodes, err := rt.Registry.build(bp)
	if err != nil {
		return nil, err
	}
	id := opts.RunID
	if id == "" {
		id = newRunID()
	}
	dir := filepath.Join(rt.runsDir(), id)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create run directory: %w", err)
	}
	lock, err := lockRun(dir)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(filepath.Join(dir, "events.jsonl")); err == nil {
		lock.Close()
		return nil, fmt.Errorf("run %s already exists in %s: resume it instead", id, dir)
	}
	ws, _ := filepath.Abs(orDefault(opts.Workspace, "."))
	m := meta{RunID: id, Blueprint: bp.File, Workspace: ws, Labels: opts.Labels}
	if opts.Settings != nil {
		b, err := json.Marshal(opts.Settings)
		if err != nil {
			lock.Close()
			return nil, fmt.Errorf("run settings: %w", err)
		}
		m.Settings = b
	}
	if err := writeFiles(rt.redactor(bp), dir, map[string][]byte{"blueprint.yaml": bp.Source, "meta.json": mustJSON(m)}); err != nil {
		lock.Close()
		return nil, err
	}
	x, err := rt.newExecution(bp, nodes, dir, m, 0, lock)
	if err != nil {
		return nil, err
	}
	x.stage("validate", validateStart, nil)
	x.inputs = withDefaults(bp, inputs)
	if err := x.prepare(ctx, false); err != nil {
		// Nothing ran: leave no half-made run behind.
		err = x.abort(err)
		_ = os.RemoveAll(dir)
		return nil, err
	}
	start := Event{Type: EvRunStarted, RunID: id, Blueprint: bp.Name, Inputs: inputs, Time: time.Now()}
	if err := x.input(start); err != nil {
		return nil, x.abort(err)
	}
	return x.loop(ctx)
}

// runsDir is made absolute: nodes run commands in other directories (git
// in a promotion repository), where a relative run directory names
// nothing ("git check-ignore … not a git repository").
func (rt *Runtime) runsDir() string {
	return absDir(orDefault(rt.RunsDir, filepath.Join(".sandgate", "runs")))
}

// absDir is dir made absolute, or dir when the working directory is gone.
func absDir(dir string) string {
	if abs, err := filepath.Abs(dir); err == nil {
		return abs
	}
	return dir
}

func (rt *Runtime) logger() *slog.Logger {
	if rt.Logger != nil {
		return rt.Logger
	}
	return slog.New(slog.DiscardHandler)
}

// CheckInputs is the check Run makes of a run's inputs, for engines that
// start runs elsewhere: it returns them converted to their declared types.
func CheckInputs(bp *blueprint.Blueprint, in map[string]any) (map[string]any, error) {
	return checkInputs(bp, in)
}

// checkInputs rejects unknown inputs and missing required ones before
// anything runs, and converts CLI strings to declared types.
func checkInputs(bp *blueprint.Blueprint, in map[string]any) (map[string]any, error) {
	out := map[string]any{}
	var problems []string
	for k, v := range in {
		decl, ok := bp.Inputs[k]
		if !ok {
			problems = append(problems, fmt.Sprintf("unknown input %q (declared: %s)", k, strings.Join(bp.InputOrder, ", ")))
			continue
		}
		cv, err := convertInput(decl, v)
		if err == nil {
			err = decl.CheckValue(cv)
		}
		if err != nil {
			problems = append(problems, err.Error())
			continue
		}
		out[k] = cv
	}
	for _, name := range bp.InputOrder {
		if _, ok := out[name]; !ok && bp.Inputs[name].Required {
			problems = append(problems, fmt.Sprintf("missing required input %q", name))
		}
	}
	if b, _ := json.Marshal(out); len(b) > MaxInputBytes {
		problems = append(problems, fmt.Sprintf("the inputs are %d bytes together; at most %d fit the run's journal (put long text in a file of the repository)", len(b), MaxInputBytes))
	}
	if len(problems) > 0 {
		sort.Strings(problems)
		return nil, fmt.Errorf("inputs: %s", strings.Join(problems, "; "))
	}
	return out, nil
}

// MaxInputBytes caps a run's inputs (as JSON): they are journaled in one
// line, which holds at most MaxJournalLine.
const MaxInputBytes = MaxJournalLine / 2

func convertInput(decl *blueprint.Input, v any) (any, error) {
	s, isStr := v.(string)
	switch decl.Type {
	case "int":
		if isStr {
			var n int
			if _, err := fmt.Sscanf(s, "%d", &n); err != nil {
				return nil, fmt.Errorf("input %s: %q is not an integer", decl.Name, s)
			}
			return n, nil
		}
		if n, ok := v.(int); ok {
			return n, nil
		}
	case "bool":
		if isStr && (s == "true" || s == "false") {
			return s == "true", nil
		}
		if b, ok := v.(bool); ok {
			return b, nil
		}
	default:
		if isStr {
			return s, nil
		}
	}
	return nil, fmt.Errorf("input %s: %v is not a %s", decl.Name, v, decl.Type)
}

func newRunID() string {
	var b [3]byte
	_, _ = rand.Read(b[:])
	return time.Now().UTC().Format("20060102-150405") + "-" + hex.EncodeToString(b[:])
}

func mustJSON(v any) []byte {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		panic(err)
	}
	return append(b, '\n')
}

// redactor builds a run's redactor from the harness environment.
func (rt *Runtime) redactor(bp *blueprint.Blueprint) *secrets.Redactor {
	return secrets.FromOS(append(append([]string(nil), bp.Credentials...), rt.Secrets...)...)
}

// writeFiles writes each file atomically (temp file, then rename), with
// credentials redacted.
func writeFiles(r *secrets.Redactor, dir string, files map[string][]byte) error {
	for name, data := range files {
		if strings.HasSuffix(name, ".json") {
			data = r.JSON(data)
		} else {
			data = r.Bytes(data)
		}
		tmp := filepath.Join(dir, "."+name+".tmp")
		if err := os.WriteFile(tmp, data, 0o644); err != nil {
			return fmt.Errorf("write %s: %w", name, err)
		}
		if err := os.Rename(tmp, filepath.Join(dir, name)); err != nil {
			return fmt.Errorf("write %s: %w", name, err)
		}
	}
	return nil
}
