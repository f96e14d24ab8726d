package main

import (
	"context"
	"fmt"
	"github.com/sandgate/sandgate/internal/termtext"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const mcpHelp = `[--model M] [--allow-env VAR]... [--allow-endpoint URL]... [--blueprints-dir DIR]...

Serves sandgate's tools over stdio with the Model Context Protocol, for a
person's own coding agent (Claude Code, Cursor, Codex): validate_blueprint,
graph, start_run, run_status, show_run, answer_handoff, list_reviews.
Claude Code: {"mcpServers": {"sandgate": {"command": "sandgate", "args": ["mcp"]}}}

Blueprint files are read only under the repository the server is started
in and the --blueprints-dir directories, and only if they are blueprints:
a tool call cannot make the server read any other file. A tool call that
fails or panics answers with an error; the server goes on serving.

start_run and answer_handoff start 'sandgate run' / 'sandgate answer' as
background processes with --model, --base-url, --api-key-env, --allow-env
and --allow-endpoint as given HERE: a tool call names a blueprint, a
repository and inputs, never what the harness lets into the box. A run's
output is in run.log (answers: answer-<n>.log) in its run directory; runs
go on when the server stops (sandgate cancel stops them).

flags:`

func cmdMcp(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("mcp", mcpHelp, stdout, stderr)
	var rf runFlags
	fs.StringVar(&rf.model, "model", "", "model of started runs' agent nodes (as run --model)")
	fs.StringVar(&rf.baseURL, "base-url", "", "endpoint of started runs' agent nodes (as run --base-url)")
	fs.StringVar(&rf.apiKeyEnv, "api-key-env", "", "variable holding started runs' API key (as run --api-key-env)")
	fs.Var(&rf.allowEnv, "allow-env", "credential variable started runs may pass into the box (repeatable, as run --allow-env)")
	fs.Var(&rf.allowEndpoints, "allow-endpoint", "URL prefix started runs may send tokens to (repeatable, as run --allow-endpoint)")
	by := fs.String("by", "", "who answers hand-offs through this server, as recorded (default: the login name)")
	var bpDirs listFlag
	fs.Var(&bpDirs, "blueprints-dir", "directory besides the server's repository that tool calls may read blueprint files from (repeatable)")
	if _, code, ok := fs.parseN(args, 0, 0); !ok {
		return code
	}
	exe, err := os.Executable()
	if err != nil {
		fmt.Fprintln(stderr, "sandgate mcp: cannot find this binary to start runs with:", err)
		return exitFailed
	}
	srv := newMCPServer(&serveActions{exe: exe, answerArgs: rf.answerArgs()}, decider(*by), mcpRoots(bpDirs))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// stdout is the CLI's redacting writer: no credential of the harness's
	// environment reaches the client. Each JSON-RPC message is one write.
	t := &mcp.IOTransport{Reader: os.Stdin, Writer: nopWriteCloser{stdout}}
	if err := srv.Run(ctx, t); err != nil && ctx.Err() == nil {
		fmt.Fprintln(stderr, "sandgate mcp:", err)
		return exitFailed
	}
	return exitOK
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// mcpTools serve one client. acts starts the run and answer children;
// roots are the directories blueprint files are read from (blueprintFile).
type mcpTools struct {
	acts  *serveActions
	by    string
	roots []string
}

func newMCPServer(acts *serveActions, by string, roots []string) *mcp.Server {
	m := &mcpTools{acts: acts, by: by, roots: roots}
	s := mcp.NewServer(&mcp.Implementation{Name: "sandgate", Version: version()}, &mcp.ServerOptions{
		Instructions: "sandgate runs coding agents unattended behind gates. Write a blueprint (YAML; " +
			"sandgate schema prints its JSON Schema), check it with validate_blueprint, then start_run it " +
			"on a git repository and poll run_status; show_run explains the end, answer_handoff continues a " +
			"handed-off run, list_reviews shows changes waiting for a person.",
	})
	readOnly := &mcp.ToolAnnotations{ReadOnlyHint: true}
	addTool(s, &mcp.Tool{Name: "validate_blueprint", Annotations: readOnly,
		Description: "Check a blueprint file; every problem comes back as file:line:col: field: problem."}, m.validate)
	addTool(s, &mcp.Tool{Name: "graph", Annotations: readOnly,
		Description: "Draw a blueprint file as Mermaid (default) or Graphviz DOT."}, m.graph)
	addTool(s, &mcp.Tool{Name: "start_run",
		Description: "Start an unattended run of a blueprint (a file, or a built-in by name) on a git repository, " +
			"in the background; returns its run id once the run has started. Poll run_status."}, m.startRun)
	addTool(s, &mcp.Tool{Name: "run_status", Annotations: readOnly,
		Description: "A run's status, the node it is on and its attempts so far."}, m.runStatus)
	addTool(s, &mcp.Tool{Name: "show_run", Annotations: readOnly,
		Description: "A run's whole summary; for a handed-off run also the start of its hand-off."}, m.showRun)
	addTool(s, &mcp.Tool{Name: "answer_handoff",
		Description: "Continue a handed-off run: node `to` starts again with `note` as its feedback."}, m.answer)
	addTool(s, &mcp.Tool{Name: "list_reviews", Annotations: readOnly,
		Description: "The repository's local review queue: changes runs left for a person to approve or reject."}, m.listReviews)
	return s
}

// addTool adds a tool whose handler cannot take the server down: a panic
// becomes the call's error, and the server (with the runs it started)
// goes on serving. An error's text quotes what blueprints and runs wrote
// (a problem names a hostile key, a run's log ends the message), so it
// goes through termtext like textResult.
func addTool[In, Out any](s *mcp.Server, t *mcp.Tool, h mcp.ToolHandlerFor[In, Out]) {
	mcp.AddTool(s, t, func(ctx context.Context, req *mcp.CallToolRequest, in In) (res *mcp.CallToolResult, out Out, err error) {
		defer func() {
			if r := recover(); r != nil {
				var zero Out
				res, out, err = nil, zero, fmt.Errorf("%s failed inside the server (%v); the server goes on", t.Name, r)
			}
			if err != nil {
				err = quotedError{err}
			}
		}()
		return h(ctx, req, in)
	})
}

// quotedError is err with its text written out by termtext.Text.
type quotedError struct{ err error }

func (e quotedError) Error() string { return termtext.Text(e.err.Error()) }
func (e quotedError) Unwrap() error { return e.err }

// repoState is where a repository's runs and reviews are recorded, as
// `sandgate run --repo DIR` records them.
type repoState struct{ root, runs, reviews string }

func locateRepo(repo string) (repoState, error) {
	if repo == "" {
		repo = "."
	}
	root, err := repoRoot(repo)
	if err != nil {
		return repoState{}, err
	}
	st := stateDir(root)
	return repoState{root: root, runs: filepath.Join(st, "runs"), reviews: filepath.Join(st, "reviews")}, nil
}

// findRun resolves a run id (in repo's runs directory) or a run directory
// to an absolute run directory.
func findRun(run, repo string) (string, error) {
	if run == "" {
		return "", fmt.Errorf("run: give a run id (from start_run) or a run directory")
	}
	runs := ""
	if !strings.ContainsAny(run, `/\`) {
		st, err := locateRepo(repo)
		if err != nil {
			return "", fmt.Errorf("run %s: %w", run, err)
		}
		runs = st.runs
	}
	dir, err := runDir(run, runs)
	if err != nil {
		return "", err
	}
	return filepath.Abs(dir)
}

// textResult is a tool's answer as text. It quotes what runs wrote (a
// reason, a title): the caller's client may print it to a terminal, so
// it goes through termtext like everything the CLI prints.
func textResult(format string, a ...any) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: termtext.Text(fmt.Sprintf(format, a...))}}}
}
