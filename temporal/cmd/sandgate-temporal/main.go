// Command sandgate-temporal runs sandgate blueprints on Temporal: `worker`
// serves runs on this host, `run` starts one and follows it, `answer`
// continues a handed-off run. `sandgate worker` and `sandgate run
// --temporal` run this binary when it is beside sandgate or on PATH.
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"

	"github.com/sandgate/sandgate/internal/cliflag"
	"github.com/sandgate/sandgate/nodes"
	"github.com/sandgate/sandgate/nodes/agent"
	"github.com/sandgate/sandgate/runtime"
	"github.com/sandgate/sandgate/sandbox"
	"github.com/sandgate/sandgate/temporal"
)

func main() {
	// The sandbox re-executes this binary for its confined helpers.
	sandbox.Main()
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

const usage = `usage: sandgate-temporal COMMAND [flags]

commands:
  worker --temporal HOST:PORT [--namespace NS] [--task-queue Q] [--max-runs N]
         serve runs on this host (their workspaces live here)
  run BLUEPRINT --temporal HOST:PORT [--repo DIR] [--input NAME=VALUE]...
         start a run, print its progress, exit 0 succeeded, 3 handed off,
         1 failed, 130 canceled (Ctrl-C cancels the run)
  answer RUN_ID --node NODE --note TEXT --temporal HOST:PORT
         continue a handed-off run`

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, usage)
		return temporal.ExitUsage
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		fmt.Fprintln(stdout, usage)
		return 0
	case "worker":
		return cmdWorker(args[1:], stdout, stderr)
	case "run":
		return cmdRun(args[1:], stdout, stderr)
	case "answer":
		return cmdAnswer(args[1:], stdout, stderr)
	}
	fmt.Fprintln(stderr, usage)
	return temporal.ExitUsage
}

// conn holds the flags every command takes to reach the server.
type conn struct {
	hostPort, namespace, queue string
}

func (c *conn) register(fs *flag.FlagSet) {
	fs.StringVar(&c.hostPort, "temporal", "", "Temporal frontend HOST:PORT (required)")
	fs.StringVar(&c.namespace, "namespace", "default", "Temporal namespace")
	fs.StringVar(&c.queue, "task-queue", temporal.DefaultTaskQueue, "task queue runs start on")
}

// dial connects; the SDK logs warnings and errors only (to stderr), so
// a run's progress stays readable.
func (c *conn) dial() (client.Client, error) {
	if c.hostPort == "" {
		return nil, fmt.Errorf("--temporal HOST:PORT is required")
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	cl, err := client.Dial(client.Options{HostPort: c.hostPort, Namespace: c.namespace, Logger: sdklog.NewStructuredLogger(logger)})
	if err != nil {
		return nil, fmt.Errorf("connect to Temporal at %s: %w", c.hostPort, err)
	}
	return cl, nil
}

// help prints a command's usage line and flags to stdout when the
// arguments ask for help (before any "--"), and reports whether they did:
// the command then exits 0.
func help(fs *flag.FlagSet, line string, args []string, stdout io.Writer) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		if a == "-h" || a == "-help" || a == "--help" || a == "--h" {
			fmt.Fprintln(stdout, line)
			fs.SetOutput(stdout)
			fs.PrintDefaults()
			return true
		}
	}
	return false
}

// parse parses flags that may follow positional arguments.
func parse(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return pos, nil
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

func cmdWorker(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("worker", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var c conn
	c.register(fs)
	maxRuns := fs.Int("max-runs", 0, "most runs this host holds at once (0: no bound)")
	hostID := fs.String("host-id", temporal.HostName(), "this host's identity; its task queue is QUEUE@HOST-ID")
	runsDir := fs.String("runs-dir", filepath.Join(".sandgate", "runs"), "directory holding the run directories")
	model := fs.String("model", "", "model for every agent node: a model name, script:FILE or replay:FILE")
	unconfined := fs.Bool("allow-unsandboxed", false, "let blueprints with sandbox.isolation: none run commands unconfined")
	if help(fs, "usage: sandgate-temporal worker --temporal HOST:PORT [flags]", args, stdout) {
		return 0
	}
	if pos, err := parse(fs, args); err != nil || len(pos) > 0 {
		return temporal.ExitUsage
	}
	cl, err := c.dial()
	if err != nil {
		fmt.Fprintln(stderr, "sandgate-temporal:", err)
		return temporal.ExitUsage
	}
	defer cl.Close()
	cfg := nodes.Config{RunsDir: *runsDir, Agent: agent.Options{Model: *model}, AllowUnconfined: *unconfined}
	// One runtime (its registry, its runs directory) serves every run; each
	// run gets the sandboxed workspace of its own repository and commit.
	h := &temporal.Host{Name: *hostID, MaxRuns: *maxRuns, Runtime: nodes.NewRuntime(cfg),
		Prepare: func(repo, rev string) runtime.Prepare {
			c := cfg
			c.Repo, c.Rev = repo, rev
			return c.Environment()
		}}
	ws := temporal.NewWorkers(cl, c.queue, h)
	for _, w := range ws {
		if err := w.Start(); err != nil {
			fmt.Fprintln(stderr, "sandgate-temporal: start worker:", err)
			return temporal.ExitFailed
		}
	}
	fmt.Fprintf(stderr, "worker %s serving %s (host queue %s), runs in %s\n", h.Name, c.queue, h.Queue, *runsDir)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	<-ctx.Done()
	for _, w := range ws {
		w.Stop()
	}
	if err := h.Close(); err != nil {
		fmt.Fprintln(stderr, "sandgate-temporal: stop runs:", err)
		return temporal.ExitFailed
	}
	return 0
}

func cmdRun(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var c conn
	c.register(fs)
	repo := fs.String("repo", ".", "repository the run works on (a path the workers see)")
	wait := fs.Duration("handoff-wait", temporal.DefaultHandoffWait, "how long a handed-off run waits for an answer")
	attrs := fs.Bool("search-attributes", false, "keep SandgateStatus/SandgateBlueprint/SandgateRepository search attributes (registered in the namespace) instead of the memo")
	inputs := cliflag.Inputs{}
	fs.Var(inputs, "input", "blueprint input NAME=VALUE (repeatable)")
	labels := runtime.Labels{}
	fs.Var(labels, "label", "label NAME=VALUE to find the run by later, as sandgate run's (repeatable)")
	const line = "usage: sandgate-temporal run BLUEPRINT --temporal HOST:PORT [--repo DIR] [--input NAME=VALUE]... [--label NAME=VALUE]..."
	if help(fs, line, args, stdout) {
		return 0
	}
	pos, err := parse(fs, args)
	if err != nil || len(pos) != 1 {
		fmt.Fprintln(stderr, line)
		return temporal.ExitUsage
	}
	in, name, err := prepareRun(pos[0], *repo, inputs)
	if err != nil {
		fmt.Fprintln(stderr, "sandgate-temporal:", err)
		return temporal.ExitUsage
	}
	in.HandoffWait, in.SearchAttributes = *wait, *attrs
	if len(labels) > 0 {
		in.Labels = labels
	}
	cl, err := c.dial()
	if err != nil {
		fmt.Fprintln(stderr, "sandgate-temporal:", err)
		return temporal.ExitUsage
	}
	defer cl.Close()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	id := newRunID()
	wr, err := temporal.Start(context.Background(), cl, c.queue, id, name, in)
	if err != nil {
		fmt.Fprintln(stderr, "sandgate-temporal: start the run:", err)
		return temporal.ExitFailed
	}
	fmt.Fprintf(stdout, "run %s started (workflow %s)\n", id, wr.GetRunID())
	st, err := temporal.Follow(ctx, cl, wr, stdout, 500*time.Millisecond)
	if err != nil {
		fmt.Fprintln(stderr, "sandgate-temporal:", err)
		return temporal.ExitFailed
	}
	fmt.Fprintf(stdout, "%s: %s (%s) on host %s, run directory %s\n", st.RunID, st.Status, st.Reason, st.Host, st.Dir)
	if st.Note != "" {
		fmt.Fprintln(stdout, st.Note)
	}
	return temporal.ExitCode(st.Status)
}

// prepareRun validates the blueprint and inputs here, before anything
// starts, and pins the commit the run works on.
func prepareRun(file, repo string, inputs cliflag.Inputs) (temporal.RunInput, string, error) {
	src, err := os.ReadFile(file)
	if err != nil {
		return temporal.RunInput{}, "", err
	}
	bp, err := nodes.NewRegistry().Parse(file, src)
	if err != nil {
		return temporal.RunInput{}, "", err
	}
	in, err := runtime.CheckInputs(bp, inputs)
	if err != nil {
		return temporal.RunInput{}, "", err
	}
	abs, err := filepath.Abs(repo)
	if err != nil {
		return temporal.RunInput{}, "", err
	}
	out, err := exec.Command("git", "-C", abs, "rev-parse", "HEAD").Output()
	if err != nil {
		return temporal.RunInput{}, "", fmt.Errorf("%s: not a git repository with a commit: %w", abs, err)
	}
	return temporal.RunInput{File: file, Source: src, Inputs: in, Repo: abs, Rev: strings.TrimSpace(string(out))}, bp.Name, nil
}

func cmdAnswer(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("answer", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var c conn
	c.register(fs)
	var a temporal.Answer
	fs.StringVar(&a.Node, "node", "", "node to continue with")
	fs.StringVar(&a.Note, "note", "", "the answer, handed to the node as feedback")
	fs.StringVar(&a.By, "by", os.Getenv("USER"), "who answers")
	const line = "usage: sandgate-temporal answer RUN_ID --node NODE --note TEXT --temporal HOST:PORT"
	if help(fs, line, args, stdout) {
		return 0
	}
	pos, err := parse(fs, args)
	if err != nil || len(pos) != 1 || a.Node == "" {
		fmt.Fprintln(stderr, line)
		return temporal.ExitUsage
	}
	cl, err := c.dial()
	if err != nil {
		fmt.Fprintln(stderr, "sandgate-temporal:", err)
		return temporal.ExitUsage
	}
	defer cl.Close()
	if err := temporal.SendAnswer(context.Background(), cl, pos[0], a); err != nil {
		fmt.Fprintln(stderr, "sandgate-temporal:", err)
		return temporal.ExitFailed
	}
	fmt.Fprintf(stdout, "answered %s: continue at %s\n", pos[0], a.Node)
	return 0
}

func newRunID() string {
	var b [3]byte
	_, _ = rand.Read(b[:])
	return time.Now().UTC().Format("20060102-150405") + "-" + hex.EncodeToString(b[:])
}
