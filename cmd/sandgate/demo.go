package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/sandgate/sandgate/blueprints"
	"github.com/sandgate/sandgate/cost"
	"github.com/sandgate/sandgate/internal/shellquote"
	"github.com/sandgate/sandgate/internal/termtext"
	"github.com/sandgate/sandgate/runtime"
	"github.com/sandgate/sandgate/sandbox"
)

// demoRepo is a small Go module with a seeded bug and a failing test.
var demoRepo = map[string]string{
	"go.mod":       "module example.com/calc\n\ngo 1.22\n",
	"calc.go":      "// Package calc does arithmetic.\npackage calc\n\n// Add returns the sum of a and b.\nfunc Add(a, b int) int {\n\treturn a - b\n}\n\n// Double returns twice n.\nfunc Double(n int) int {\n\treturn Add(n, n)\n}\n",
	"calc_test.go": "package calc\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif got := Add(2, 3); got != 5 {\n\t\tt.Errorf(\"Add(2, 3) = %d, want 5\", got)\n\t}\n}\n\nfunc TestDouble(t *testing.T) {\n\tif got := Double(4); got != 8 {\n\t\tt.Errorf(\"Double(4) = %d, want 8\", got)\n\t}\n}\n",
	"AGENTS.md":    "# Conventions\n- Fix bugs in the code, never by changing tests.\n- Run `go test ./...` before finishing.\n",
}

const demoHelp = `[bad-patch]

Runs the offline demo in a new temporary directory: a Go repository with a
seeded bug, its bare remote, the shipped fix-failing-test blueprint and a
scripted model (a real one when OPENAI_API_KEY is set). The agent fixes the
bug behind the gates and the change goes to review; with bad-patch its
fixes fail, the retry bound runs out and the run is handed off (exit 3).

flags:`

func cmdDemo(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("demo", demoHelp, stdout, stderr)
	model := fs.String("model", "", "model for the agent (default: a scripted model, or a real one when OPENAI_API_KEY is set)")
	keep := fs.Bool("keep", true, "keep the demo directory afterwards")
	prices := fs.String("prices", "", "YAML/JSON price table for the model (default $SANDGATE_PRICES, then built-in list prices)")
	pos, code, ok := fs.parseN(args, 0, 1)
	if !ok {
		return code
	}
	if len(pos) == 1 && pos[0] != "bad-patch" {
		return fs.usageError(fmt.Sprintf("unknown scenario %q (the one other scenario is bad-patch)", pos[0]))
	}
	scenario := "fix"
	if len(pos) == 1 {
		scenario = "bad-patch"
	}
	if err := sandbox.Platform(); err != nil {
		fmt.Fprintln(stderr, "sandgate:", err)
		return exitFailed
	}
	dir, err := os.MkdirTemp("", "sandgate-demo-")
	if err != nil {
		fmt.Fprintln(stderr, "sandgate:", err)
		return exitFailed
	}
	if !*keep {
		defer os.RemoveAll(dir)
	}
	repo, remote, bpPath, err := setUpDemo(dir, scenario, model)
	if err != nil {
		fmt.Fprintln(stderr, "sandgate demo:", err)
		return exitFailed
	}
	fmt.Fprintf(stdout, "sandgate demo (%s)\n  repository with a seeded bug: %s\n  model: %s\n  blueprint: blueprints/fix-failing-test.yaml\n\n", scenario, repo, *model)
	// Run from the demo directory so its run and review directories stay there.
	if orig, err := os.Getwd(); err == nil {
		defer os.Chdir(orig)
	}
	if err := os.Chdir(dir); err != nil {
		fmt.Fprintln(stderr, "sandgate:", err)
		return exitFailed
	}
	rf := &runFlags{runsDir: filepath.Join(dir, ".sandgate", "runs"), model: *model, reviewDir: filepath.Join(dir, ".sandgate", "reviews"), prices: *prices}
	if rf.priceTab, err = cost.FromEnv(rf.prices, os.Getenv); err != nil {
		fmt.Fprintln(stderr, "sandgate:", err)
		return exitUsage
	}
	p := newProgress(stdout, true)
	defer p.close()
	rt := newRuntime(rf, repo, "", p, stderr)
	bp, err := rt.Registry.Load(bpPath)
	if err != nil {
		return reportLoadError(stderr, err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	sum, err := rt.Run(ctx, bp, runtime.RunOptions{Workspace: repo, Settings: rf.settings(bpPath), Inputs: map[string]any{
		"task": "TestAdd fails: Add(2, 3) returns -1", "remote": remote}})
	if err != nil {
		fmt.Fprintln(stderr, "sandgate:", err)
		if sum == nil {
			return exitFailed
		}
	}
	report(stdout, sum)
	if *keep {
		// The demo's runs live in its own directory, not the current
		// repository's: say how to see them from anywhere.
		fmt.Fprintf(stdout, "\nthe demo's files stay in %s\nsee this run again: sandgate show %s --runs-dir %s\n",
			dir, sum.RunID, shellquote.Quote(rf.runsDir))
	}
	return exitCode(sum.Status)
}

// setUpDemo writes the repository, its bare remote, the blueprint and the
// scripted model into dir.
func setUpDemo(dir, scenario string, model *string) (repo, remote, bpPath string, err error) {
	repo = filepath.Join(dir, "calc")
	if err := os.MkdirAll(repo, 0o755); err != nil {
		return "", "", "", err
	}
	for name, content := range demoRepo {
		if err := os.WriteFile(filepath.Join(repo, name), []byte(content), 0o644); err != nil {
			return "", "", "", err
		}
	}
	git := func(wd string, args ...string) error {
		cmd := exec.Command("git", args...)
		cmd.Dir = wd
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, out)
		}
		return nil
	}
	if err := git(repo, "init", "-q", "-b", "main"); err != nil {
		return "", "", "", err
	}
	if err := git(repo, "add", "."); err != nil {
		return "", "", "", err
	}
	if err := git(repo, "-c", "user.name=Demo", "-c", "user.email=demo@example.com", "commit", "-q", "-m", "calc: Add and Double"); err != nil {
		return "", "", "", err
	}
	remote = filepath.Join(dir, "remote.git")
	if err := git(dir, "clone", "-q", "--bare", repo, remote); err != nil {
		return "", "", "", err
	}
	files := map[string]string{"fix-failing-test.yaml": "fix-failing-test.yaml", "blueprint.schema.json": "blueprint.schema.json",
		"demo/fix.script.yaml": "fix.script.yaml", "demo/bad-patch.script.yaml": "bad-patch.script.yaml"}
	for src, dst := range files {
		b, err := blueprints.FS.ReadFile(src)
		if err != nil {
			return "", "", "", err
		}
		if err := os.WriteFile(filepath.Join(dir, dst), b, 0o644); err != nil {
			return "", "", "", err
		}
	}
	if *model == "" {
		if os.Getenv("OPENAI_API_KEY") != "" {
			*model = "gpt-4.1-mini (OPENAI_API_KEY is set; override with --model)"
			*model = strings.Fields(*model)[0]
		} else {
			*model = "script:" + filepath.Join(dir, scenario+".script.yaml")
		}
	}
	return repo, remote, filepath.Join(dir, "fix-failing-test.yaml"), nil
}

// report prints the verdict, the trace's stage timings and the change that
// went to review, or the hand-off.
func report(w io.Writer, sum *runtime.Summary) {
	w = termtext.Writer{W: w} // with a real model, the reason, the diff and handoff.md are its words
	fmt.Fprintf(w, "\nstatus: %s (%s)\nrun directory: %s\n", sum.Status, sum.Reason, sum.Dir)
	if v := verifySummary(filepath.Join(sum.Dir, "verify.json")); v != "" {
		fmt.Fprintf(w, "\nverify.json: %s\n", v)
	}
	printStages(w, filepath.Join(sum.Dir, "trace.json"))
	switch sum.Status {
	case runtime.StatusSucceeded:
		entries, _ := filepath.Glob(filepath.Join(".sandgate", "reviews", "*", "diff.patch"))
		for _, e := range entries {
			d, _ := os.ReadFile(e)
			abs, _ := filepath.Abs(filepath.Dir(e))
			fmt.Fprintf(w, "\nthe change that went to review (%s):\n%s", abs, d)
		}
	case runtime.StatusHandedOff:
		md, _ := os.ReadFile(filepath.Join(sum.Dir, "handoff.md"))
		fmt.Fprintf(w, "\nhandoff.md:\n%s", md)
	}
}

// printStages reads trace.json and prints each span's duration in order.
func printStages(w io.Writer, path string) {
	f, err := os.Open(path)
	if err != nil {
		return
	}
	defer f.Close()
	type span struct {
		Name               string
		StartTime, EndTime time.Time
	}
	var spans []span
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var s span
		if json.Unmarshal(sc.Bytes(), &s) == nil && s.Name != "" {
			spans = append(spans, s)
		}
	}
	if len(spans) == 0 {
		return
	}
	// Spans are written as they end; show them in start order.
	for i := 1; i < len(spans); i++ {
		for j := i; j > 0 && spans[j].StartTime.Before(spans[j-1].StartTime); j-- {
			spans[j], spans[j-1] = spans[j-1], spans[j]
		}
	}
	fmt.Fprintln(w, "\nstage timings (trace.json):")
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	for _, s := range spans {
		if strings.HasPrefix(s.Name, "chat ") || strings.HasPrefix(s.Name, "execute_tool ") {
			continue
		}
		fmt.Fprintf(tw, "  %s\t%d ms\n", s.Name, s.EndTime.Sub(s.StartTime).Milliseconds())
	}
	tw.Flush()
}
