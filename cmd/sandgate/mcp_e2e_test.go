package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sandgate/sandgate/internal/wait"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sandgate/sandgate/runtime"
)

// stdioMCP starts `sandgate mcp ARGS` as a real child process (this test
// binary acting as the CLI) and connects the Go SDK's client over its
// stdin and stdout.
func stdioMCP(t *testing.T, args ...string) *mcp.ClientSession {
	t.Helper()
	cs, _ := stdioMCPCmd(t, args...)
	return cs
}

// stdioMCPCmd is stdioMCP that also returns the server's process.
func stdioMCPCmd(t *testing.T, args ...string) (*mcp.ClientSession, *exec.Cmd) {
	t.Helper()
	t.Setenv("SANDGATE_TEST_CLI", "1")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// The tests' blueprints are written under the temporary directory.
	cmd := exec.Command(exe, append([]string{"mcp", "--blueprints-dir", os.TempDir()}, args...)...)
	cmd.Stderr = os.Stderr
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v0"}, nil).
		Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs, cmd
}

// bothLegsScript serves both legs of answerE2E from one --model (a script
// plays from its start in every process): the first run only writes
// step1.txt and is handed off; the answered run, on the workspace the
// first left, fixes Add.
const bothLegsScript = `- tool_calls: [{function: {name: run, arguments: {command: "if test -f step1.txt; then sed -i 's/a - b/a + b/' calc.go; else echo first > step1.txt; fi"}}}]
- tool_calls: [{function: {name: finish, arguments: {summary: did a step}}}]
- tool_calls: [{function: {name: finish, arguments: {summary: nothing more}}}]
`

// awaitStatus polls run_status until the run is no longer running (bound
// by the test's deadline only: a loaded machine is slow, not wrong).
func awaitStatus(t *testing.T, cs *mcp.ClientSession, id, repo string) statusOut {
	t.Helper()
	var s statusOut
	wait.Until(t, "run "+id+" ended", func() bool {
		var text string
		var isErr bool
		s, text, isErr = callTool[statusOut](t, cs, "run_status", map[string]any{"run": id, "repo": repo})
		if isErr {
			t.Fatalf("run_status %s: %s", id, text)
		}
		return s.Status != "running" && s.Status != "finishing"
	})
	return s
}

// TestMCPStdioRunAndAnswer drives a real `sandgate mcp` over stdio the way
// a coding agent does: start_run on a blueprint with a scripted agent,
// poll run_status to the hand-off, show_run for its lead, answer_handoff,
// and poll again to success — the run and the answer going on in the
// server's background children.
func TestMCPStdioRunAndAnswer(t *testing.T) {
	repo, st := stateRepo(t)
	cs := stdioMCP(t, "--model", modelScript(t, bothLegsScript), "--by", "ana")
	bp := writeBlueprint(t, answerE2E)

	started, text, isErr := callTool[startOut](t, cs, "start_run", map[string]any{"blueprint": bp, "repo": repo, "labels": map[string]any{"team": "infra"}})
	if isErr || started.RunID == "" || started.RunDir != filepath.Join(st.runs, started.RunID) {
		t.Fatalf("start_run: %v %+v\n%s", isErr, started, text)
	}
	if _, err := os.Stat(filepath.Join(started.RunDir, "events.jsonl")); err != nil {
		t.Fatalf("start_run returned before the run directory had its journal: %v", err)
	}
	s := awaitStatus(t, cs, started.RunID, repo)
	if s.Status != "handed_off" || s.NodeRuns != 4 {
		t.Fatalf("first leg: %+v\n%s", s, must(os.ReadFile(started.Log)))
	}
	sh, _, isErr := callTool[showOut](t, cs, "show_run", map[string]any{"run": started.RunID, "repo": repo})
	if isErr || sh.HandoffLead == "" || !strings.Contains(sh.HandoffLead, "implement") {
		t.Fatalf("show_run: %v %+v", isErr, sh)
	}

	a, text, isErr := callTool[answerOut](t, cs, "answer_handoff", map[string]any{
		"run": started.RunID, "repo": repo, "to": "implement", "note": "--allow-unsandboxed now fix Add"})
	if isErr || a.RunDir != started.RunDir {
		t.Fatalf("answer_handoff: %v %+v\n%s\n%s", isErr, a, text, readLogs(started.RunDir))
	}
	s = awaitStatus(t, cs, started.RunID, repo)
	if s.Status != "succeeded" {
		t.Fatalf("answered run: %+v\n%s", s, readLogs(started.RunDir))
	}
	sh, _, _ = callTool[showOut](t, cs, "show_run", map[string]any{"run": started.RunDir})
	if len(sh.Summary.Answers) != 1 || sh.Summary.Answers[0].By != "ana" || sh.Summary.Answers[0].Note != "--allow-unsandboxed now fix Add" {
		t.Fatalf("the answer as journaled: %+v", sh.Summary.Answers)
	}
	if sh.Summary.Labels["team"] != "infra" {
		t.Fatalf("start_run's labels are not the run's: %v", sh.Summary.Labels)
	}
}

const unconfinedBlueprint = `version: 1
name: open
sandbox: {isolation: none}
inputs:
  x: {description: anything}
start: a
nodes:
  a: {type: shell, run: "true", next: done}
  done: {type: succeed}
`

// TestMCPStdioInputIsNoFlag: an input value that spells the consent flag
// for unconfined runs reaches `sandgate run` as the input's value, so the
// blueprint that opts out of the sandbox is still refused (were the value
// read as a flag, the run would go ahead unconfined) and leaves no run
// behind; the refusal's reason comes back as a tool error.
func TestMCPStdioInputIsNoFlag(t *testing.T) {
	repo, st := stateRepo(t)
	cs := stdioMCP(t)
	bp := writeBlueprint(t, unconfinedBlueprint)
	for _, x := range []string{"--allow-unsandboxed", "-allow-unsandboxed=true", "y --allow-unsandboxed"} {
		out, text, isErr := callTool[startOut](t, cs, "start_run", map[string]any{"blueprint": bp, "repo": repo, "inputs": map[string]any{"x": x}})
		if !isErr || !strings.Contains(text, "isolation") {
			t.Fatalf("BREACH? input x=%q: isErr %v %+v\n%s", x, isErr, out, text)
		}
	}
	if ents, _ := os.ReadDir(st.runs); len(ents) != 0 {
		t.Fatalf("refused runs left directories: %v", ents)
	}
}

// TestMCPRunsOutliveTheServer: runs started through `sandgate mcp` go on
// when the server ends, whether its client closes it (stdin ends) or it
// dies at once (SIGKILL, as a fatal error in the server would end it):
// each run finishes, succeeded, on its own.
func TestMCPRunsOutliveTheServer(t *testing.T) {
	repo, _ := stateRepo(t)
	bp := writeBlueprint(t, "version: 1\nname: slow\nstart: a\nnodes:\n  a: {type: shell, run: \"sleep 2\", next: done}\n  done: {type: succeed}\n")
	for _, end := range []string{"closed", "killed"} {
		cs, cmd := stdioMCPCmd(t)
		started, text, isErr := callTool[startOut](t, cs, "start_run", map[string]any{"blueprint": bp, "repo": repo})
		if isErr {
			t.Fatalf("start_run: %s", text)
		}
		if end == "killed" {
			if err := cmd.Process.Kill(); err != nil {
				t.Fatal(err)
			}
		}
		cs.Close()
		_ = cmd.Wait()
		var sum *runtime.Summary
		wait.Until(t, "the run started through a server that was "+end+" ended", func() bool {
			sum, _ = runtime.Summarize(started.RunDir)
			alive, _ := runtime.Alive(started.RunDir)
			return sum != nil && sum.Status != runtime.StatusRunning && !alive
		})
		if sum == nil || sum.Status != runtime.StatusSucceeded {
			t.Fatalf("server %s: the run ended %+v\n%s", end, sum, must(os.ReadFile(started.Log)))
		}
	}
}
