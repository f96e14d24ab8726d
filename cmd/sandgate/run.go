package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/sandgate/sandgate/nodes"
	"github.com/sandgate/sandgate/nodes/agent"
	"github.com/sandgate/sandgate/runtime"
	"github.com/sandgate/sandgate/runtime/telemetry"
	"github.com/sandgate/sandgate/sandbox"
	"github.com/sandgate/sandgate/secrets"
)

// inputFlags collects repeated --input k=v flags.
type inputFlags map[string]any

func (f inputFlags) String() string { return fmt.Sprint(map[string]any(f)) }

func (f inputFlags) Set(s string) error {
	k, v, ok := strings.Cut(s, "=")
	if !ok || k == "" {
		return fmt.Errorf("want NAME=VALUE, got %q", s)
	}
	f[k] = v
	return nil
}

// listFlag collects a repeatable flag.
type listFlag []string

func (f *listFlag) String() string { return strings.Join(*f, ",") }

func (f *listFlag) Set(s string) error {
	*f = append(*f, s)
	return nil
}

// runFlags are shared by run and resume.
type runFlags struct {
	runsDir          string
	json             bool
	allowUnsandboxed bool
	model            string
	record           string
	baseURL          string
	apiKeyEnv        string
	allowEnv         listFlag
	allowEndpoints   listFlag
}

func (rf *runFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&rf.runsDir, "runs-dir", filepath.Join(".sandgate", "runs"), "directory holding run directories")
	fs.BoolVar(&rf.json, "json", false, "print the run summary as JSON")
	fs.BoolVar(&rf.allowUnsandboxed, "allow-unsandboxed", false, "let blueprints with sandbox.isolation: none run commands unconfined")
	fs.StringVar(&rf.model, "model", "", "model for every agent node: a model name, script:FILE or replay:FILE")
	fs.StringVar(&rf.record, "record", "", "append every model exchange to FILE, for replay:FILE later")
	fs.StringVar(&rf.baseURL, "base-url", "", "OpenAI-compatible endpoint of every agent node (default $OPENAI_BASE_URL, then OpenAI)")
	fs.StringVar(&rf.apiKeyEnv, "api-key-env", "", "environment variable holding the agents' API key (default OPENAI_API_KEY)")
	fs.Var(&rf.allowEnv, "allow-env", "let the blueprint pass this credential variable into the box via sandbox.env (repeatable)")
	fs.Var(&rf.allowEndpoints, "allow-endpoint", "let the blueprint send agent keys to this base_url (repeatable)")
}

// redactor removes the harness's credentials (and the operator's key, and
// the blueprint's token_env names when bp is known) from what the CLI prints.
func (rf *runFlags) redactor(creds []string) *secrets.Redactor {
	if rf.apiKeyEnv != "" {
		creds = append(creds, rf.apiKeyEnv)
	}
	return secrets.FromOS(creds...)
}

func newRuntime(rf *runFlags, repo string, stdout, stderr io.Writer) *runtime.Runtime {
	var extra []string
	if rf.apiKeyEnv != "" {
		extra = []string{rf.apiKeyEnv}
	}
	return &runtime.Runtime{
		Registry: nodes.NewRegistryWith(nodes.Options{
			Agent:    agent.Options{Model: rf.model, Record: rf.record, BaseURL: rf.baseURL, APIKeyEnv: rf.apiKeyEnv},
			AllowEnv: rf.allowEnv, AllowEndpoints: rf.allowEndpoints}),
		RunsDir:  rf.runsDir,
		Observer: newProgress(stdout, !rf.json),
		Tracing:  telemetry.Tracing(),
		Secrets:  extra,
		Prepare: nodes.Environment(nodes.EnvOptions{Repo: repo, AllowUnconfined: rf.allowUnsandboxed, Caches: nodes.GoCaches(),
			AllowEnv: rf.allowEnv,
			OnAlert:  func(a sandbox.Alert) { fmt.Fprintf(stderr, "ALERT egress %s %s: %s\n", a.Method, a.Target, a.Reason) }}),
	}
}

func cmdRun(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("run", "FILE --repo DIR [--input NAME=VALUE]...", stderr)
	var rf runFlags
	rf.register(fs)
	repo := fs.String("repo", ".", "repository the run works on")
	inputs := inputFlags{}
	fs.Var(inputs, "input", "blueprint input NAME=VALUE (repeatable)")
	files, err := parseInterspersed(fs, args)
	if err != nil {
		return exitUsage
	}
	if len(files) != 1 {
		fs.Usage()
		return exitUsage
	}
	rt := newRuntime(&rf, *repo, stdout, stderr)
	bp, err := rt.Registry.Load(files[0])
	if err != nil {
		return reportLoadError(stderr, err)
	}
	// Now that the blueprint's credential variables are known, print
	// through a redactor that knows them too.
	r := rf.redactor(bp.Credentials)
	stdout, stderr = r.Writer(stdout), r.Writer(stderr)
	rt = newRuntime(&rf, *repo, stdout, stderr)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	sum, err := rt.Run(ctx, bp, runtime.RunOptions{Inputs: inputs, Workspace: *repo})
	return finishRun(sum, err, &rf, stdout, stderr)
}

func cmdResume(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("resume", "RUN_DIR", stderr)
	var rf runFlags
	rf.register(fs)
	dirs, ok := exactlyOne(fs, args)
	if !ok {
		return exitUsage
	}
	prev, err := runtime.Summarize(dirs[0])
	if err != nil {
		fmt.Fprintln(stderr, "sandgate:", err)
		return exitUsage
	}
	r := rf.redactor(nil)
	stdout, stderr = r.Writer(stdout), r.Writer(stderr)
	rt := newRuntime(&rf, prev.Workspace, stdout, stderr)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	sum, err := rt.Resume(ctx, dirs[0])
	return finishRun(sum, err, &rf, stdout, stderr)
}

// finishRun prints the verdict and maps the status to the exit code.
func finishRun(sum *runtime.Summary, err error, rf *runFlags, stdout, stderr io.Writer) int {
	if err != nil {
		fmt.Fprintln(stderr, "sandgate:", err)
		if sum == nil {
			return exitUsage
		}
	}
	if rf.json {
		b, _ := json.MarshalIndent(sum, "", "  ")
		fmt.Fprintln(stdout, string(b))
	} else {
		fmt.Fprintf(stdout, "\nstatus: %s (%s)\nrun dir: %s\n", sum.Status, sum.Reason, sum.Dir)
		if sum.Status == runtime.StatusHandedOff {
			fmt.Fprintf(stdout, "hand-off: %s\n", filepath.Join(sum.Dir, "handoff.md"))
		}
	}
	return exitCode(sum.Status)
}

func exitCode(s runtime.Status) int {
	switch s {
	case runtime.StatusSucceeded:
		return exitOK
	case runtime.StatusHandedOff:
		return exitHandoff
	case runtime.StatusCanceled:
		return exitCanceled
	}
	return exitFailed
}
