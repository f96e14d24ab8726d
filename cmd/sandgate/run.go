package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/sandgate/sandgate/blueprint"
	"github.com/sandgate/sandgate/cost"
	"github.com/sandgate/sandgate/internal/cliflag"
	"github.com/sandgate/sandgate/internal/termtext"
	"github.com/sandgate/sandgate/nodes"
	"github.com/sandgate/sandgate/nodes/agent"
	"github.com/sandgate/sandgate/runtime"
	"github.com/sandgate/sandgate/runtime/telemetry"
	"github.com/sandgate/sandgate/sandbox"
	"github.com/sandgate/sandgate/secrets"
)

// labelText is labels as NAME=VALUE words in name order.
func labelText(l runtime.Labels) string {
	words := make([]string, 0, len(l))
	for k, v := range l {
		words = append(words, k+"="+v)
	}
	slices.Sort(words)
	return strings.Join(words, " ")
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
	format           *string
	allowUnsandboxed bool
	coldBuilds       bool
	model            string
	record           string
	baseURL          string
	apiKeyEnv        string
	allowEnv         listFlag
	allowEndpoints   listFlag
	reviewDir        string
	// prices names the price file (--prices); priceTab is the table
	// loaded from it (loadPrices), nil until then.
	prices   string
	priceTab cost.Table
	alerts   alertFlags
	// alertSinks are the resolved alerts flags (alertFlags.sinks).
	alertSinks []nodes.AlertSink
	// given are the flags given on the command line; answer and resume
	// take the others from the run's record (carryOn).
	given map[string]bool
}

func (rf *runFlags) register(fs *flagSet) {
	fs.StringVar(&rf.runsDir, "runs-dir", "", "directory holding run directories (default $XDG_STATE_HOME/sandgate/<repo>-<hash>/runs, outside the work tree)")
	rf.format = fs.format("text", "json")
	fs.BoolVar(&rf.allowUnsandboxed, "allow-unsandboxed", false, "let blueprints with sandbox.isolation: none run commands unconfined")
	fs.BoolVar(&rf.coldBuilds, "cold-builds", false, "do not warm the harness's Go build cache for the run's commit (every box then compiles what the host has not built)")
	fs.StringVar(&rf.model, "model", "", "model for every agent node: a model name, script:FILE or replay:FILE")
	fs.StringVar(&rf.record, "record", "", "append every model exchange to FILE, for replay:FILE later")
	fs.StringVar(&rf.baseURL, "base-url", "", "OpenAI-compatible endpoint of every agent node (default $OPENAI_BASE_URL, then OpenAI)")
	fs.StringVar(&rf.apiKeyEnv, "api-key-env", "", "environment variable holding the agents' API key (default OPENAI_API_KEY)")
	fs.StringVar(&rf.prices, "prices", "", "YAML/JSON price table, model: {input, output, cached_input} in USD per million tokens (default $SANDGATE_PRICES, then built-in list prices as of "+cost.DefaultsDate+": check your provider)")
	fs.Var(&rf.allowEnv, "allow-env", "let the blueprint pass this credential variable into the box via sandbox.env (repeatable)")
	fs.Var(&rf.allowEndpoints, "allow-endpoint", "let the blueprint send credentials to URLs under this prefix: an agent's base_url, a git_push remote with token_env, a review's base_url (repeatable; https://github.com and https://api.github.com need none)")
	rf.alerts.register(fs)
}

// json: the summary goes out as JSON (--format json).
func (rf *runFlags) json() bool { return rf.format != nil && *rf.format == "json" }

// redactor removes the harness's credentials (and the operator's key, and
// the blueprint's token_env names when bp is known) from what the CLI prints.
func (rf *runFlags) redactor(creds []string) *secrets.Redactor {
	if rf.apiKeyEnv != "" {
		creds = append(creds, rf.apiKeyEnv)
	}
	creds = append(creds, rf.alerts.secretNames()...)
	return secrets.FromOS(creds...)
}

// config is the runtime configuration the flags make for a run on commit
// rev of repo (rev empty: HEAD, or the run's recorded base on resume).
func (rf *runFlags) config(repo, rev string) nodes.Config {
	return nodes.Config{RunsDir: rf.runsDir, Repo: repo, Rev: rev,
		Agent:    agent.Options{Model: rf.model, Record: rf.record, BaseURL: rf.baseURL, APIKeyEnv: rf.apiKeyEnv, Prices: rf.priceTab},
		AllowEnv: rf.allowEnv, AllowEndpoints: rf.allowEndpoints, ReviewDir: rf.reviewDir, AllowUnconfined: rf.allowUnsandboxed, ColdBuilds: rf.coldBuilds,
		AlertSinks: rf.alertSinks, Secrets: rf.alerts.secretNames()}
}

// registry loads blueprints with the flags' allowances.
func (rf *runFlags) registry() *runtime.Registry {
	return nodes.NewRegistryWith(rf.config("", "").Options())
}

// runConfig is config with what every run of the CLI has: traces and
// metrics (runtime/telemetry), egress alerts on stderr and, when p is not
// nil, progress through p.
func (rf *runFlags) runConfig(repo, rev string, p *progress, stderr io.Writer) nodes.Config {
	c := rf.config(repo, rev)
	if p != nil {
		c.Observer = p
	}
	c.Tracing, c.Metrics = telemetry.Tracing(), telemetry.Metrics()
	c.OnAlert = func(a sandbox.Alert) { fmt.Fprintf(stderr, "ALERT egress %s %s: %s\n", a.Method, a.Target, a.Reason) }
	return c
}

// newRuntime builds the runtime for a run on commit rev of repo.
func newRuntime(rf *runFlags, repo, rev string, p *progress, stderr io.Writer) *runtime.Runtime {
	return nodes.NewRuntime(rf.runConfig(repo, rev, p, stderr))
}

const runHelp = `FILE|NAME --repo DIR [--input NAME=VALUE]...

Runs a blueprint file, or a blueprint shipped in the binary by NAME (see
sandgate blueprints), on a commit of the repository. The run works on HEAD;
if files differ from HEAD it stops and says how many, unless
--include-uncommitted (run on a snapshot of the work tree, taken through a
temporary index: your index and files are untouched) or --head (run on HEAD
without them) is given.

Runs and local reviews are recorded outside the work tree, in
$XDG_STATE_HOME/sandgate/<repo>-<hash>/{runs,reviews} (~/.local/state when
XDG_STATE_HOME is unset), so git status stays clean; --runs-dir overrides.

flags:`

func cmdRun(args []string, stdout, stderr io.Writer) int {
	if wantsTemporal(args) {
		return runExternal(append([]string{"run"}, args...), stdout, stderr)
	}
	fs := newFlags("run", runHelp, stdout, stderr)
	var rf runFlags
	rf.register(fs)
	repo := fs.String("repo", ".", "repository the run works on")
	inc := fs.Bool("include-uncommitted", false, "run on a snapshot of the work tree, uncommitted and untracked (not ignored) files included")
	head := fs.Bool("head", false, "run on HEAD, leaving uncommitted changes out")
	runID := fs.String("run-id", "", "name of the run directory (default: a time-stamped random id; sandgate mcp names its runs)")
	inputs := cliflag.Inputs{}
	fs.Var(inputs, "input", "blueprint input NAME=VALUE (repeatable)")
	labels := runtime.Labels{}
	fs.Var(labels, "label", "label NAME=VALUE to find the run by later, kept with it and shown in the inbox (repeatable; search label:NAME=VALUE)")
	files, code, ok := fs.parseN(args, 1, 1)
	if !ok {
		return code
	}
	if *inc && *head {
		return fs.usageError("--include-uncommitted and --head exclude each other")
	}
	if *runID != "" && !validRunID(*runID) {
		fmt.Fprintf(stderr, "sandgate run: --run-id %q: want letters, digits, '.', '_' and '-', not starting with '.' or '-'\n", *runID)
		return exitUsage
	}
	bp, err := resolveBlueprint(rf.registry(), files[0])
	if err != nil {
		return reportLoadError(stderr, err)
	}
	// Now that the blueprint's credential variables are known, print
	// through a redactor that knows them too.
	r := rf.redactor(bp.Credentials)
	stdout, stderr = r.Writer(stdout), r.Writer(stderr)
	root, rev, err := preflight(bp, &rf, inputs, *repo, *inc, *head, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "sandgate:", err)
		return exitUsage
	}
	p := newProgress(stdout, !rf.json())
	defer p.close()
	rt := newRuntime(&rf, root, rev, p, stderr)
	// The runtime's registry knows the review directory preflight chose; a
	// blueprint runs only on the registry it was loaded through, so load
	// the same source again through it.
	if bp, err = rt.Registry.Parse(bp.File, bp.Source); err != nil {
		return reportLoadError(stderr, err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	sum, err := rt.Run(ctx, bp, runtime.RunOptions{Inputs: inputs, Workspace: root, RunID: *runID, Settings: rf.settings(bp.File), Labels: labels})
	return finishRun(sum, err, &rf, stdout, stderr)
}

// validRunID: a run id names one directory inside the runs directory,
// never a path out of it.
func validRunID(id string) bool {
	if id == "" || len(id) > 100 || id[0] == '.' || id[0] == '-' {
		return false
	}
	for _, c := range id {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// preflight checks everything a run needs before anything is created and
// settles the commit and the record directories.
func preflight(bp *blueprint.Blueprint, rf *runFlags, inputs cliflag.Inputs, repo string, inc, head bool, stderr io.Writer) (root, rev string, err error) {
	if err := sandbox.Platform(); err != nil {
		return "", "", err
	}
	if root, err = repoRoot(repo); err != nil {
		return "", "", err
	}
	if err := checkInputs(bp, inputs); err != nil {
		return "", "", err
	}
	if err := checkModelKeys(bp, rf); err != nil {
		return "", "", err
	}
	if err := rf.checkPrices(bp); err != nil {
		return "", "", err
	}
	if rf.alertSinks, err = rf.alerts.sinks(); err != nil {
		return "", "", err
	}
	if err := checkRemotes(bp, inputs, root, rf.allowEndpoints); err != nil {
		return "", "", err
	}
	if rev, err = chooseRev(root, inc, head, stderr); err != nil {
		return "", "", err
	}
	if rf.runsDir == "" {
		rf.runsDir = filepath.Join(stateDir(root), "runs")
	}
	rf.runsDir = absPath(rf.runsDir)
	rf.reviewDir = filepath.Join(stateDir(root), "reviews")
	// The environment refuses it again; here before a run is created.
	if err := nodes.CheckKeyFiles(bp, nodes.EnvOptions{Repo: root, Caches: nodes.GoCaches()}, rf.runsDir); err != nil {
		return "", "", err
	}
	return root, rev, nil
}

func cmdResume(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("resume", "RUN_ID|RUN_DIR\n\nContinues a run whose harness died (sandgate runs shows it interrupted) from its\njournal: completed nodes never run again. Exit codes as for run.\n\nflags:", stdout, stderr)
	var rf runFlags
	rf.register(fs)
	dirs, code, ok := fs.parseN(args, 1, 1)
	if !ok {
		return code
	}
	rf.given = fs.given()
	return continueRun(&rf, dirs[0], stdout, stderr, func(ctx context.Context, rt *runtime.Runtime, dir string) (*runtime.Summary, error) {
		return rt.Resume(ctx, dir)
	})
}

// continueRun carries a recorded run on (resume, answer) in its own
// directory and workspace, printing progress like run does.
func continueRun(rf *runFlags, arg string, stdout, stderr io.Writer,
	call func(context.Context, *runtime.Runtime, string) (*runtime.Summary, error)) int {
	if err := sandbox.Platform(); err != nil {
		fmt.Fprintln(stderr, "sandgate:", err)
		return exitUsage
	}
	dir, err := runDir(arg, rf.runsDir)
	if err != nil {
		fmt.Fprintln(stderr, "sandgate:", err)
		return exitUsage
	}
	prev, err := runtime.Summarize(dir)
	if err != nil {
		fmt.Fprintln(stderr, "sandgate:", err)
		return exitUsage
	}
	if rf.runsDir == "" {
		rf.runsDir = filepath.Dir(dir)
	}
	rf.runsDir = absPath(rf.runsDir)
	rf.reviewDir = filepath.Join(filepath.Dir(filepath.Clean(rf.runsDir)), "reviews")
	if err := rf.carryOn(dir); err != nil {
		fmt.Fprintln(stderr, "sandgate:", err)
		return exitUsage
	}
	if rf.alertSinks, err = rf.alerts.sinks(); err != nil {
		fmt.Fprintln(stderr, "sandgate:", err)
		return exitUsage
	}
	r := rf.redactor(nil)
	stdout, stderr = r.Writer(stdout), r.Writer(stderr)
	if bp, err := rf.registry().Load(filepath.Join(dir, "blueprint.yaml")); err == nil {
		// A blueprint that no longer loads fails in the runtime, which
		// says why. These checks come before anything is journaled: a run
		// they refuse stays as it was (a handed-off run answerable).
		if err := errors.Join(rf.checkPrices(bp), checkModelKeys(bp, rf)); err != nil {
			fmt.Fprintln(stderr, "sandgate:", err)
			return exitUsage
		}
	}
	p := newProgress(stdout, !rf.json())
	defer p.close()
	rt := newRuntime(rf, prev.Workspace, "", p, stderr)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	sum, err := call(ctx, rt, dir)
	return finishRun(sum, err, rf, stdout, stderr)
}

// finishRun prints the verdict and maps the status to the exit code.
func finishRun(sum *runtime.Summary, err error, rf *runFlags, stdout, stderr io.Writer) int {
	if err != nil {
		fmt.Fprintln(stderr, "sandgate:", err)
		if sum == nil {
			return exitUsage
		}
	}
	if rf.json() {
		b, _ := json.MarshalIndent(sum, "", "  ")
		fmt.Fprintln(stdout, string(termtext.JSON(b)))
	} else {
		fmt.Fprintf(stdout, "\nstatus: %s (%s)\nrun dir: %s\n", sum.Status, termtext.Short(sum.Reason, maxReason), termtext.Line(sum.Dir))
		if sum.Status == runtime.StatusHandedOff {
			fmt.Fprintf(stdout, "hand-off: %s\n", termtext.Line(filepath.Join(sum.Dir, "handoff.md")))
			if line := answerLine(sum.Dir); line != "" {
				fmt.Fprintf(stdout, "to continue it: %s\n", termtext.Line(line))
			}
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

// checkPrices loads the price table (--prices, $SANDGATE_PRICES, the
// defaults) and refuses a blueprint with budget.cost whose agents call a
// model the table does not price.
func (rf *runFlags) checkPrices(bp *blueprint.Blueprint) error {
	if rf.priceTab == nil {
		t, err := cost.FromEnv(rf.prices, os.Getenv)
		if err != nil {
			return err
		}
		rf.priceTab = t
	}
	return agent.CheckPrices(bp, agent.Options{Model: rf.model, Prices: rf.priceTab})
}
