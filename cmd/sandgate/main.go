// Command sandgate validates, draws and runs sandgate blueprints.
//
// Exit codes: 0 ok, 1 a run failed, 2 bad usage or an invalid blueprint,
// 3 a run was handed off to a human, 130 a run was canceled.
package main

import (
	"fmt"
	"io"
	"os"

	"github.com/sandgate/sandgate/internal/termtext"
	"github.com/sandgate/sandgate/sandbox"
	"github.com/sandgate/sandgate/secrets"
)

// Exit codes shared by every subcommand.
const (
	exitOK       = 0
	exitFailed   = 1
	exitUsage    = 2
	exitHandoff  = 3
	exitCanceled = 130
)

type command struct {
	name    string
	summary string
	run     func(args []string, stdout, stderr io.Writer) int
}

func commands() []command {
	return []command{
		{"demo", "run the offline demo: an agent fixes a seeded bug behind the gates ('demo bad-patch' ends handed off)", cmdDemo},
		{"validate", "check blueprints and report every problem with file:line:col", cmdValidate},
		{"graph", "draw a blueprint as Mermaid or Graphviz DOT", cmdGraph},
		{"schema", "print the JSON Schema of the blueprint format", cmdSchema},
		{"run", "run a blueprint (a file, or a built-in by name) against a repository", cmdRun},
		{"eval", "measure a blueprint on a task set (resolved, handed off, falsely promoted, cost); compare two reports", cmdEval},
		{"blueprints", "list the blueprints built into this binary, with their inputs", cmdBlueprints},
		{"resume", "continue a crashed run from its journal", cmdResume},
		{"answer", "continue a handed-off run: --to NODE --note TEXT becomes that node's feedback", cmdAnswer},
		{"show", "print a run's timeline and verdict", cmdShow},
		{"runs", "list runs", cmdRuns},
		{"stats", "success, hand-off and failure rates, durations, cost, top hand-off reasons, flaky tests and failing gates across runs", cmdStats},
		{"cancel", "stop a run from another process", cmdCancel},
		{"review", "list, show, approve or reject changes in the local review queue", cmdReview},
		{"serve", "web inbox of runs, hand-offs and review queues (127.0.0.1:7777; --token for other addresses)", cmdServe},
		{"mcp", "serve validate, graph, run, status, answer and review tools to a coding agent over stdio (MCP)", cmdMcp},
		{"prune", "remove old runs, decided review entries and unused snapshots (--dry-run lists them)", cmdPrune},
		{"sandbox", "sandbox check: report which isolation layers work here; sandbox image propose: the image CI's workflow runs in", cmdSandbox},
		{"worker", "serve runs from a Temporal server on this host (runs sandgate-temporal worker)", cmdWorker},
		{"version", "print the version and VCS revision (also --version)", cmdVersion},
	}
}

func main() {
	// The sandbox re-executes this binary for its confined helpers.
	sandbox.Main()
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return exitUsage
	}
	if args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(stdout)
		return exitOK
	}
	if args[0] == "--version" || args[0] == "-version" {
		args[0] = "version"
	}
	// Nothing the CLI prints carries a credential of the harness's
	// environment (see package secrets for which variables count).
	r := secrets.FromOS()
	stdout, stderr = r.Writer(stdout), r.Writer(stderr)
	// Errors quote what runs and repositories wrote (a reason, a file
	// name, a line of a blueprint): sandgate writes no control sequence of
	// its own to stderr, so every one there is written out visibly.
	stderr = termtext.Writer{W: stderr}
	for _, c := range commands() {
		if c.name == args[0] {
			return c.run(args[1:], stdout, stderr)
		}
	}
	fmt.Fprintf(stderr, "sandgate: unknown command %q\n\n", args[0])
	usage(stderr)
	return exitUsage
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: sandgate COMMAND [flags] [args]")
	fmt.Fprintln(w, "\ncommands:")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-10s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "\nsandgate COMMAND --help tells more about each.")
	fmt.Fprintln(w, "exit codes: 0 ok, 1 run failed, 2 usage or invalid blueprint, 3 handed off, 130 canceled")
}
