package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sandgate/sandgate/blueprint"
	"github.com/sandgate/sandgate/internal/cliflag"
	"github.com/sandgate/sandgate/runtime"
)

type startIn struct {
	Blueprint string            `json:"blueprint" jsonschema:"blueprint file, or the name of a built-in blueprint (sandgate blueprints lists them)"`
	Repo      string            `json:"repo,omitempty" jsonschema:"git repository the run works on (default: the server's directory)"`
	Inputs    map[string]string `json:"inputs,omitempty" jsonschema:"blueprint inputs, NAME: VALUE"`
	Labels    map[string]string `json:"labels,omitempty" jsonschema:"labels to find the run by later, NAME: VALUE (as run's --label)"`
	// The two ways to run on a work tree that differs from HEAD, as run's
	// flags.
	IncludeUncommitted bool `json:"include_uncommitted,omitempty" jsonschema:"run on a snapshot of the work tree, uncommitted and untracked files included"`
	Head               bool `json:"head,omitempty" jsonschema:"run on HEAD, leaving uncommitted changes out"`
}

type startOut struct {
	RunID  string `json:"run_id"`
	RunDir string `json:"run_dir"`
	// Status is the run's (running, or already its end), or starting when
	// the box was still being set up at the time the call returned.
	Status string `json:"status"`
	Log    string `json:"log"`
}

// startRun starts `sandgate run` in the background, named by a run id
// chosen here, and returns once the run has journaled its start. Only the
// blueprint, repository, inputs and the two tree choices come from the
// call; the harness's permissions (--allow-env, --allow-endpoint, the
// model) are the server's own flags, and every value from the call is a
// flag's value in one argument (--input=K=V) or follows "--", so none is
// read as a flag.
func (m *mcpTools) startRun(ctx context.Context, _ *mcp.CallToolRequest, in startIn) (*mcp.CallToolResult, startOut, error) {
	bp, src, err := m.startBlueprint(in.Blueprint)
	if err != nil {
		return nil, startOut{}, err
	}
	args, st, err := startArgs(in, bp, m.acts.answerArgs)
	if err != nil {
		return nil, startOut{}, err
	}
	out, err := m.acts.launch(ctx, st.runs, in.Blueprint, src, args)
	if err != nil {
		return nil, startOut{}, err
	}
	id, logPath := out.RunID, out.Log
	return textResult("run %s %s (run_status with run %q; output in %s)", id, out.Status, id, logPath), out, nil
}

// launch starts `sandgate run` in the background in a new directory of
// runs, named by a run id chosen here, and returns once the run has
// journaled its start. bpArg is the blueprint as run takes it; with src
// set, the child runs a copy of src kept in the run directory instead.
func (a *serveActions) launch(ctx context.Context, runs, bpArg string, src []byte, args []string) (startOut, error) {
	id := mcpRunID()
	dir := filepath.Join(runs, id)
	if err := os.MkdirAll(runs, 0o755); err != nil {
		return startOut{}, fmt.Errorf("runs directory: %w", err)
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		return startOut{}, fmt.Errorf("run directory: %w", err)
	}
	logPath := filepath.Join(dir, "run.log")
	logf, err := os.OpenFile(logPath, os.O_RDWR|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o644)
	if err != nil {
		os.RemoveAll(dir)
		return startOut{}, fmt.Errorf("run log: %w", err)
	}
	// The log stays readable through logf even when a run that could not
	// start removes its directory (or the exit below does).
	defer logf.Close()
	if src != nil {
		// The child runs the copy that was checked here: the file itself
		// could be swapped (for a link to a secret, whose lines would come
		// back in the child's errors) between this check and its read.
		if bpArg, err = keepSource(dir, bpArg, src); err != nil {
			os.RemoveAll(dir)
			return startOut{}, err
		}
	}
	args = append(append([]string{"run", "--run-id=" + id}, args...), "--", bpArg)
	done, err := a.spawn(args, logf, func() {
		if !startedRun(dir) { // nothing ran: leave no half-made run behind
			os.RemoveAll(dir)
		}
	})
	if err != nil {
		return startOut{}, fmt.Errorf("start sandgate run: %w", err)
	}
	err = a.awaitChild(ctx, func() bool { return startedRun(dir) }, done, func(err error) error {
		if err == nil {
			err = errors.New("exited without starting")
		}
		return fmt.Errorf("sandgate run: %w: %s", err, tailFile(logf, 2<<10))
	})
	if err != nil {
		return startOut{}, err
	}
	out := startOut{RunID: id, RunDir: dir, Status: "starting", Log: logPath}
	if sum, err := summarize(dir, nil); err == nil && startedRun(dir) {
		out.Status = string(sum.Status)
	}
	return out, nil
}

// startBlueprint loads the blueprint a start_run call names: a built-in
// by name (src nil), or a file read as blueprintFile allows.
func (m *mcpTools) startBlueprint(name string) (*blueprint.Blueprint, []byte, error) {
	if name == "" || strings.HasPrefix(name, "-") {
		return nil, nil, fmt.Errorf("blueprint %q: give a blueprint file or a built-in name (a file whose name starts with '-' as ./NAME)", name)
	}
	reg := (&runFlags{}).registry()
	if _, err := os.Stat(name); err != nil && !strings.ContainsAny(name, `/\`) && !strings.HasSuffix(name, ".yaml") && !strings.HasSuffix(name, ".yml") {
		bp, err := resolveBlueprint(reg, name)
		return bp, nil, loadProblems(err)
	}
	abs, src, err := m.blueprintFile(name)
	if err != nil {
		return nil, nil, fmt.Errorf("blueprint %s: %w", name, err)
	}
	bp, err := reg.Parse(abs, src)
	if err != nil {
		return nil, nil, loadProblems(err)
	}
	return bp, src, nil
}

// keepSource writes a checked blueprint into the run directory, under its
// own name, for the child to run.
func keepSource(dir, file string, src []byte) (string, error) {
	p := filepath.Join(dir, "source", filepath.Base(file))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return "", fmt.Errorf("keep the blueprint: %w", err)
	}
	if err := os.WriteFile(p, src, 0o644); err != nil {
		return "", fmt.Errorf("keep the blueprint: %w", err)
	}
	return p, nil
}

// startArgs checks a start_run call and makes run's arguments from it and
// the operator's flags (all but --run-id and the blueprint).
func startArgs(in startIn, bp *blueprint.Blueprint, operator []string) ([]string, repoState, error) {
	if in.IncludeUncommitted && in.Head {
		return nil, repoState{}, errors.New("include_uncommitted and head exclude each other")
	}
	st, err := locateRepo(in.Repo)
	if err != nil {
		return nil, repoState{}, err
	}
	inputs := cliflag.Inputs{}
	for k, v := range in.Inputs {
		if err := inputs.Set(k + "=" + v); err != nil || strings.Contains(k, "=") {
			return nil, repoState{}, fmt.Errorf("input %q: a name is non-empty and has no '='", k)
		}
	}
	if err := checkInputs(bp, inputs); err != nil {
		return nil, repoState{}, err
	}
	if err := runtime.CheckLabels(in.Labels); err != nil {
		return nil, repoState{}, err
	}
	args := []string{"--repo=" + st.root}
	if in.IncludeUncommitted {
		args = append(args, "--include-uncommitted")
	}
	if in.Head {
		args = append(args, "--head")
	}
	keys := make([]string, 0, len(in.Inputs))
	for k := range in.Inputs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		args = append(args, "--input="+k+"="+in.Inputs[k])
	}
	for _, k := range slices.Sorted(maps.Keys(in.Labels)) {
		args = append(args, "--label="+k+"="+in.Labels[k])
	}
	return append(args, operator...), st, nil
}

// loadProblems makes a load failure one error that lists every positioned
// problem.
func loadProblems(err error) error {
	if err == nil {
		return nil
	}
	var ds blueprint.Diagnostics
	if errors.As(err, &ds) {
		problems, _ := splitDiagnostics(ds)
		return fmt.Errorf("invalid blueprint:\n%s", strings.Join(problems, "\n"))
	}
	return err
}

// startedRun: the run journaled its start (its box is ready).
func startedRun(dir string) bool {
	b, _ := os.ReadFile(filepath.Join(dir, "events.jsonl"))
	return bytes.Contains(b, []byte(`"type":"run_started"`))
}

// mcpRunID is a run id in the runtime's form (time-stamped, random).
func mcpRunID() string {
	var b [3]byte
	_, _ = rand.Read(b[:])
	return time.Now().UTC().Format("20060102-150405") + "-" + hex.EncodeToString(b[:])
}

// tailFile is the end of an open log, on one line.
func tailFile(f *os.File, n int64) string {
	st, err := f.Stat()
	if err != nil {
		return ""
	}
	off := max(0, st.Size()-n)
	b := make([]byte, st.Size()-off)
	k, _ := f.ReadAt(b, off)
	return strings.Join(strings.Fields(string(b[:k])), " ")
}
