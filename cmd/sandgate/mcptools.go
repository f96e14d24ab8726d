package main

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/sandgate/sandgate/internal/termtext"
	"os"
	"path/filepath"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sandgate/sandgate/blueprint"
	"github.com/sandgate/sandgate/nodes"
	"github.com/sandgate/sandgate/runtime"
)

type blueprintIn struct {
	Path string `json:"path" jsonschema:"the blueprint file (YAML), absolute or relative to the server's directory"`
}

type validateOut struct {
	File          string `json:"file"`
	Valid         bool   `json:"valid"`
	Name          string `json:"name,omitempty"`
	Nodes         int    `json:"nodes,omitempty"`
	WorstCaseRuns int    `json:"worst_case_runs,omitempty"`
	// Problems are the errors, each "file:line:col: field: problem".
	Problems []string `json:"problems"`
	Warnings []string `json:"warnings"`
}

// validate reports an invalid blueprint as a result, not a tool error:
// the problems are what the agent fixes next.
func (m *mcpTools) validate(_ context.Context, _ *mcp.CallToolRequest, in blueprintIn) (*mcp.CallToolResult, validateOut, error) {
	if in.Path == "" {
		return nil, validateOut{}, fmt.Errorf("path: give the blueprint file to check")
	}
	s, _ := m.validateFile(in.Path)
	out := validateOut{File: s.File, Valid: s.Valid, Name: s.Name, Nodes: s.Nodes, WorstCaseRuns: s.WorstCaseRuns}
	out.Problems, out.Warnings = splitDiagnostics(s.Diagnostics)
	if !out.Valid {
		return textResult("invalid: %s: %d problem(s)\n%s", in.Path, len(out.Problems), strings.Join(out.Problems, "\n")), out, nil
	}
	return textResult("ok: %s: %s, %d nodes, worst case %d node runs", in.Path, out.Name, out.Nodes, out.WorstCaseRuns), out, nil
}

// validateFile validates a blueprint file a tool call names, read only
// as blueprintFile allows; a file it may not read is one problem.
func (m *mcpTools) validateFile(path string) (validateSummary, *blueprint.Blueprint) {
	_, src, err := m.blueprintFile(path)
	var bp *blueprint.Blueprint
	if err == nil {
		bp, err = blueprint.Parse(path, src, blueprint.WithTypes(nodes.Types()))
	}
	return summarizeLoad(path, bp, err), bp
}

func splitDiagnostics(ds blueprint.Diagnostics) (errs, warns []string) {
	errs, warns = []string{}, []string{}
	for _, d := range ds {
		if d.Severity == blueprint.SeverityError {
			errs = append(errs, d.Error())
		} else {
			warns = append(warns, d.Error())
		}
	}
	return errs, warns
}

type graphIn struct {
	Path   string `json:"path" jsonschema:"the blueprint file (YAML)"`
	Format string `json:"format,omitempty" jsonschema:"mermaid (default) or dot"`
}

type graphOut struct {
	Valid    bool     `json:"valid"`
	Problems []string `json:"problems"`
	Format   string   `json:"format"`
	Graph    string   `json:"graph,omitempty"`
}

func (m *mcpTools) graph(_ context.Context, _ *mcp.CallToolRequest, in graphIn) (*mcp.CallToolResult, graphOut, error) {
	out := graphOut{Format: in.Format, Problems: []string{}}
	if out.Format == "" {
		out.Format = "mermaid"
	}
	if in.Path == "" || (out.Format != "mermaid" && out.Format != "dot") {
		return nil, graphOut{}, fmt.Errorf("want path (a blueprint file) and format mermaid or dot, got path %q format %q", in.Path, in.Format)
	}
	s, bp := m.validateFile(in.Path)
	if !s.Valid {
		out.Problems, _ = splitDiagnostics(s.Diagnostics)
		return textResult("invalid: %s\n%s", in.Path, strings.Join(out.Problems, "\n")), out, nil
	}
	out.Valid, out.Graph = true, bp.Mermaid()
	if out.Format == "dot" {
		out.Graph = bp.DOT()
	}
	return textResult("%s", out.Graph), out, nil
}

type runIn struct {
	Run  string `json:"run" jsonschema:"run id (from start_run) or run directory"`
	Repo string `json:"repo,omitempty" jsonschema:"repository whose runs hold the id (default: the server's directory)"`
}

type attemptLine struct {
	Node    string `json:"node"`
	Attempt int    `json:"attempt"`
	// Outcome is pass, fail, error, canceled or running.
	Outcome string `json:"outcome"`
}

type statusOut struct {
	RunID  string `json:"run_id"`
	RunDir string `json:"run_dir"`
	// Status: running, succeeded, handed_off, failed, canceled,
	// finishing (the end is journaled, the harness still wraps up: the
	// hand-off package, the box; poll again), or interrupted (the harness
	// died: sandgate resume continues it).
	Status      string        `json:"status"`
	Reason      string        `json:"reason,omitempty"`
	CurrentNode string        `json:"current_node,omitempty"`
	NodeRuns    int           `json:"node_runs"`
	Tokens      int           `json:"tokens"`
	Attempts    []attemptLine `json:"attempts"`
}

func (m *mcpTools) runStatus(_ context.Context, _ *mcp.CallToolRequest, in runIn) (*mcp.CallToolResult, statusOut, error) {
	sum, err := summarizeRun(in)
	if err != nil {
		return nil, statusOut{}, err
	}
	out := statusOut{RunID: sum.RunID, RunDir: sum.Dir, Status: string(sum.Status), Reason: sum.Reason,
		NodeRuns: sum.NodeRuns, Tokens: sum.Tokens, Attempts: []attemptLine{}}
	for _, a := range sum.Attempts {
		l := attemptLine{Node: a.Node, Attempt: a.Attempt, Outcome: string(a.Outcome)}
		switch {
		case a.Canceled:
			l.Outcome = "canceled"
		case a.Error != "":
			l.Outcome = "error"
		case l.Outcome == "":
			l.Outcome = "running"
			if sum.Status == runtime.StatusRunning {
				out.CurrentNode = a.Node
			}
		}
		out.Attempts = append(out.Attempts, l)
	}
	if alive, _ := runtime.Alive(sum.Dir); sum.Status != runtime.StatusRunning && sum.Status != runtime.StatusInterrupted && alive {
		// Answering now would meet the harness still at work.
		out.Status, out.Reason = "finishing", fmt.Sprintf("ended %s (%s); the harness is still wrapping up", sum.Status, sum.Reason)
	}
	text := fmt.Sprintf("run %s: %s", out.RunID, out.Status)
	if out.CurrentNode != "" {
		text += ", on " + out.CurrentNode
	}
	if out.Reason != "" {
		// One line: an agent's reason must not pass for the harness's words.
		text += " (" + termtext.Short(out.Reason, maxReason) + ")"
	}
	return textResult("%s, %d node runs", text, out.NodeRuns), out, nil
}

func summarizeRun(in runIn) (*runtime.Summary, error) {
	dir, err := findRun(in.Run, in.Repo)
	if err != nil {
		return nil, err
	}
	return summarize(dir, nil)
}

type showOut struct {
	Summary *runtime.Summary `json:"summary"`
	// HandoffLead is the start of a handed-off run's handoff.md: the task,
	// the outcome and the commands that take the change over.
	HandoffLead string `json:"handoff_lead,omitempty"`
	Handoff     string `json:"handoff,omitempty"`
}

func (m *mcpTools) showRun(_ context.Context, _ *mcp.CallToolRequest, in runIn) (*mcp.CallToolResult, showOut, error) {
	sum, err := summarizeRun(in)
	if err != nil {
		return nil, showOut{}, err
	}
	out := showOut{Summary: sum}
	if sum.Attempts == nil {
		sum.Attempts = []runtime.AttemptInfo{}
	}
	text := fmt.Sprintf("run %s (%s): %s", sum.RunID, sum.Blueprint, sum.Status)
	// As sandgate show: a hand-off's reason may be an agent's words, which
	// the lead below quotes after the harness's own account.
	if sum.Reason != "" && sum.Status != runtime.StatusHandedOff {
		text += " (" + termtext.Short(sum.Reason, maxReason) + ")"
	}
	text += fmt.Sprintf("\nnode runs: %d, tokens: %d, duration: %d ms", sum.NodeRuns, sum.Tokens, sum.DurationMS)
	if sum.Status == runtime.StatusHandedOff {
		var h runtime.Handoff
		if b, err := os.ReadFile(filepath.Join(sum.Dir, "handoff.json")); err == nil && json.Unmarshal(b, &h) == nil {
			out.HandoffLead = strings.TrimRight(h.Lead(), "\n")
		}
		out.Handoff = filepath.Join(sum.Dir, "handoff.md")
		text += "\n\n" + out.HandoffLead + "\nhand-off: " + out.Handoff
	}
	return textResult("%s", text), out, nil
}

type answerIn struct {
	Run  string `json:"run" jsonschema:"run id or run directory of the handed-off run"`
	Repo string `json:"repo,omitempty" jsonschema:"repository whose runs hold the id (default: the server's directory)"`
	To   string `json:"to" jsonschema:"node to continue with"`
	Note string `json:"note" jsonschema:"the answer: what the person tells the node"`
}

type answerOut struct {
	RunID  string `json:"run_id"`
	RunDir string `json:"run_dir"`
	Status string `json:"status"`
}

// answer continues a handed-off run through the inbox's code: a
// background `sandgate answer`, returned from once the answer is
// journaled. It is recorded as answered by the server's --by.
func (m *mcpTools) answer(ctx context.Context, _ *mcp.CallToolRequest, in answerIn) (*mcp.CallToolResult, answerOut, error) {
	if in.To == "" || in.Note == "" {
		return nil, answerOut{}, fmt.Errorf("to (a node) and note (the answer) are both required")
	}
	dir, err := findRun(in.Run, in.Repo)
	if err != nil {
		return nil, answerOut{}, err
	}
	if err := m.acts.Answer(ctx, dir, in.To, in.Note, m.by); err != nil {
		return nil, answerOut{}, err
	}
	sum, err := summarize(dir, nil)
	if err != nil {
		return nil, answerOut{}, err
	}
	out := answerOut{RunID: sum.RunID, RunDir: dir, Status: string(sum.Status)}
	return textResult("answered run %s: %s continues; now %s (poll run_status)", out.RunID, in.To, out.Status), out, nil
}

type reviewsIn struct {
	Repo string `json:"repo,omitempty" jsonschema:"repository whose queue to list (default: the server's directory)"`
}

type reviewLine struct {
	ID     string `json:"id"`
	Status string `json:"status"`
	Branch string `json:"branch"`
	Title  string `json:"title"`
	Commit string `json:"commit"`
	RunDir string `json:"run_dir"`
}

type reviewsOut struct {
	Dir     string       `json:"dir"`
	Entries []reviewLine `json:"entries"`
}

func (m *mcpTools) listReviews(_ context.Context, _ *mcp.CallToolRequest, in reviewsIn) (*mcp.CallToolResult, reviewsOut, error) {
	st, err := locateRepo(in.Repo)
	if err != nil {
		return nil, reviewsOut{}, err
	}
	entries, err := (&nodes.ReviewQueue{Dir: st.reviews}).List()
	if err != nil {
		return nil, reviewsOut{}, err
	}
	out := reviewsOut{Dir: st.reviews, Entries: []reviewLine{}}
	var b strings.Builder
	fmt.Fprintf(&b, "%d review(s) in %s", len(entries), st.reviews)
	for _, e := range entries {
		out.Entries = append(out.Entries, reviewLine{ID: e.ID, Status: e.Status, Branch: e.Branch, Title: e.Title, Commit: e.Commit, RunDir: e.RunDir})
		fmt.Fprintf(&b, "\n%s  %s  %s  %s", termtext.Line(e.ID), termtext.Line(e.Status), termtext.Line(e.Branch), termtext.Short(e.Title, maxReason))
	}
	return textResult("%s", b.String()), out, nil
}
