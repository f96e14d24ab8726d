package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// mcpClient connects a Go SDK client to an in-process sandgate MCP server.
func mcpClient(t *testing.T, acts *serveActions) *mcp.ClientSession {
	t.Helper()
	// The tests' blueprints are written under the temporary directory.
	return mcpClientRoots(t, acts, []string{os.TempDir()})
}

// mcpClientRoots connects to a server that reads blueprints under roots.
func mcpClientRoots(t *testing.T, acts *serveActions, roots []string) *mcp.ClientSession {
	t.Helper()
	if acts == nil {
		acts = &serveActions{}
	}
	st, ct := mcp.NewInMemoryTransports()
	ctx := context.Background()
	ss, err := newMCPServer(acts, "ana", roots).Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v0"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close(); ss.Wait(); acts.wait() })
	return cs
}

// callTool calls a tool and decodes its structured output into T; isErr
// says whether the result was a tool error, text is its text content.
func callTool[T any](t *testing.T, cs *mcp.ClientSession, name string, args any) (out T, text string, isErr bool) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: protocol error: %v", name, err)
	}
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			text += tc.Text
		}
	}
	if res.StructuredContent != nil {
		b, _ := json.Marshal(res.StructuredContent)
		if err := json.Unmarshal(b, &out); err != nil {
			t.Fatalf("%s: structured output %s: %v", name, b, err)
		}
	}
	return out, text, res.IsError
}

const brokenBlueprint = `version: 1
name: broken
start: a
nodes:
  a: {type: shell, run: "true", next: nowhere}
  b: {type: shel, run: "true"}
`

// TestMCPValidateBlueprint: a broken blueprint is a result (not a tool
// error) with every problem positioned file:line:col: field: problem; a
// good one is valid; a call without a path is a tool error.
func TestMCPValidateBlueprint(t *testing.T) {
	cs := mcpClient(t, nil)
	bad := writeBlueprint(t, brokenBlueprint)
	out, text, isErr := callTool[validateOut](t, cs, "validate_blueprint", map[string]any{"path": bad})
	if isErr || out.Valid || len(out.Problems) < 2 || !strings.Contains(text, "invalid: ") {
		t.Fatalf("broken blueprint: isErr %v %+v\n%s", isErr, out, text)
	}
	pos := regexp.MustCompile(`^` + regexp.QuoteMeta(bad) + `:\d+:\d+: nodes\.[ab]\.[a-z]+: .+`)
	for _, p := range out.Problems {
		if !pos.MatchString(p) {
			t.Errorf("problem not positioned as file:line:col: field: problem: %q", p)
		}
	}
	good := writeBlueprint(t, answerE2E)
	out, _, isErr = callTool[validateOut](t, cs, "validate_blueprint", map[string]any{"path": good})
	if isErr || !out.Valid || out.Name != "answer-e2e" || out.Nodes != 3 || len(out.Problems) != 0 {
		t.Fatalf("good blueprint: %v %+v", isErr, out)
	}
	if _, text, isErr := callTool[validateOut](t, cs, "validate_blueprint", map[string]any{}); !isErr || !strings.Contains(text, "path") {
		t.Fatalf("no path: isErr %v %q", isErr, text)
	}
}

func TestMCPGraph(t *testing.T) {
	cs := mcpClient(t, nil)
	good := writeBlueprint(t, answerE2E)
	tests := []struct {
		args        map[string]any
		isErr       bool
		valid       bool
		wantInGraph string
	}{
		{map[string]any{"path": good}, false, true, "flowchart"},
		{map[string]any{"path": good, "format": "dot"}, false, true, "digraph"},
		{map[string]any{"path": good, "format": "svg"}, true, false, ""},
		{map[string]any{"path": writeBlueprint(t, brokenBlueprint)}, false, false, ""},
	}
	for _, tt := range tests {
		out, text, isErr := callTool[graphOut](t, cs, "graph", tt.args)
		if isErr != tt.isErr || out.Valid != tt.valid || !strings.Contains(out.Graph, tt.wantInGraph) {
			t.Errorf("%v: isErr %v valid %v graph %q text %q", tt.args, isErr, out.Valid, out.Graph, text)
		}
		if tt.valid && !strings.Contains(out.Graph, "implement") {
			t.Errorf("%v: graph without its nodes: %q", tt.args, out.Graph)
		}
		if !tt.valid && !tt.isErr && len(out.Problems) == 0 {
			t.Errorf("%v: invalid without problems", tt.args)
		}
	}
}

// stateRepo is a repository whose runs and reviews are recorded under a
// test's own XDG_STATE_HOME, where the server looks them up.
func stateRepo(t *testing.T) (string, repoState) {
	t.Helper()
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	repo := gitRepo(t)
	st, err := locateRepo(repo)
	if err != nil {
		t.Fatal(err)
	}
	return repo, st
}

// TestMCPRunStatusShowRun reads seeded runs: a succeeded one by id (the
// repository's runs), a handed-off one by directory with its hand-off
// lead; unknown runs and ids that are paths are tool errors.
func TestMCPRunStatusShowRun(t *testing.T) {
	repo, st := stateRepo(t)
	ok := writeBlueprint(t, strings.Replace(cliBlueprint, "FIX", "sed -i 's/a - b/a + b/' calc.go", 1))
	code, out, errs := runCLI("run", ok, "--repo", repo)
	if code != exitOK {
		t.Fatalf("seed run: exit %d\n%s\n%s", code, out, errs)
	}
	id := strings.TrimSuffix(strings.Fields(out)[1], ":")
	handed := handedOffRun(t, repo, st.runs, writeBlueprint(t, answerE2E))
	cs := mcpClient(t, nil)

	s, text, isErr := callTool[statusOut](t, cs, "run_status", map[string]any{"run": id, "repo": repo})
	if isErr || s.Status != "succeeded" || s.RunID != id || s.NodeRuns != 2 || len(s.Attempts) != 2 ||
		s.Attempts[1] != (attemptLine{Node: "test", Attempt: 1, Outcome: "pass"}) || s.CurrentNode != "" {
		t.Fatalf("run_status: %v %+v\n%s", isErr, s, text)
	}
	sh, text, isErr := callTool[showOut](t, cs, "show_run", map[string]any{"run": handed})
	if isErr || sh.Summary == nil || sh.Summary.Status != "handed_off" || sh.HandoffLead == "" ||
		sh.Handoff != filepath.Join(handed, "handoff.md") || !strings.Contains(text, sh.HandoffLead) {
		t.Fatalf("show_run of a hand-off: %v %+v\n%s", isErr, sh, text)
	}
	for _, run := range []string{"20990101-000000-abcdef", "..", "../" + filepath.Base(handed), ""} {
		if _, text, isErr := callTool[statusOut](t, cs, "run_status", map[string]any{"run": run, "repo": repo}); !isErr {
			t.Errorf("run_status %q: want a tool error, got %q", run, text)
		}
	}
}

// Its gate is a diff_cap: promotion needs a passing verdict, and what is
// checked here is the CLI's, not a test gate's (which would cost a judge
// box running go test on every run).
const localReviewBlueprint = `version: 1
name: local-review
start: fix
nodes:
  fix: {type: shell, run: "sed -i 's/a - b/a + b/' calc.go", next: cap}
  cap: {type: diff_cap, max_lines: 20, on_pass: commit, on_fail: stuck}
  stuck: {type: handoff}
  commit: {type: git_commit, branch: fix/add, message: "fix: Add adds", next: review}
  review: {type: review, title: "Add adds", next: done}
  done: {type: succeed}
`

// TestMCPListReviews lists the entry a run left in the repository's
// local queue.
func TestMCPListReviews(t *testing.T) {
	repo, st := stateRepo(t)
	cs := mcpClient(t, nil)
	out, _, isErr := callTool[reviewsOut](t, cs, "list_reviews", map[string]any{"repo": repo})
	if isErr || len(out.Entries) != 0 || out.Dir != st.reviews {
		t.Fatalf("empty queue: %v %+v", isErr, out)
	}
	if code, o, e := runCLI("run", writeBlueprint(t, localReviewBlueprint), "--repo", repo); code != exitOK {
		t.Fatalf("seed run: exit %d\n%s\n%s", code, o, e)
	}
	out, text, isErr := callTool[reviewsOut](t, cs, "list_reviews", map[string]any{"repo": repo})
	if isErr || len(out.Entries) != 1 || out.Entries[0].Title != "Add adds" || out.Entries[0].Branch != "fix/add" ||
		out.Entries[0].Status != "pending" || len(out.Entries[0].Commit) != 40 || !strings.Contains(text, out.Entries[0].ID) {
		t.Fatalf("list_reviews: %v %+v\n%s", isErr, out, text)
	}
	if _, text, isErr := callTool[reviewsOut](t, cs, "list_reviews", map[string]any{"repo": t.TempDir()}); !isErr || !strings.Contains(text, "not a git repository") {
		t.Fatalf("not a repository: %v %q", isErr, text)
	}
}

// TestMCPCallCannotWidenPermissions: a tool call that names a permission
// (an argument the schema does not have) is refused before anything
// starts, and so is a blueprint name that is a flag.
func TestMCPCallCannotWidenPermissions(t *testing.T) {
	repo, st := stateRepo(t)
	cs := mcpClient(t, nil)
	bp := writeBlueprint(t, answerE2E)
	for _, args := range []map[string]any{
		{"blueprint": bp, "repo": repo, "allow_env": []string{"HOME"}},
		{"blueprint": bp, "repo": repo, "allow_unsandboxed": true},
		{"blueprint": "--allow-unsandboxed", "repo": repo},
		{"blueprint": "-h", "repo": repo},
		{"blueprint": bp, "repo": repo, "inputs": map[string]any{"a=b": "c"}},
		{"blueprint": bp, "repo": repo, "labels": map[string]any{"a=b": "c"}},
		{"blueprint": bp, "repo": repo, "labels": map[string]any{"t": "x --allow-unsandboxed"}},
	} {
		if _, text, isErr := callTool[startOut](t, cs, "start_run", args); !isErr {
			t.Errorf("start_run %v: want a tool error, got %q", args, text)
		}
	}
	if ents, _ := os.ReadDir(st.runs); len(ents) != 0 {
		t.Fatalf("refused calls left runs: %v", ents)
	}
}
