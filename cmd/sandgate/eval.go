package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/sandgate/sandgate/blueprint"
	"github.com/sandgate/sandgate/eval"
	"github.com/sandgate/sandgate/internal/termtext"
	"github.com/sandgate/sandgate/sandbox"
)

const evalHelp = `TASKS.yaml --blueprint FILE --out DIR [--concurrency N] [--model M]
       sandgate eval compare A/report.json B/report.json [--format text|json]
       sandgate eval import-swebench FILE.jsonl --repos DIR [--out DIR]

Runs the blueprint once per task, each in its own run (DIR/runs/<id>/),
grades every promoted change in a fresh box with the task's held-out tests,
and writes DIR/report.json and DIR/report.md. A blueprint that takes a
"remote" input the task does not set gets a throwaway bare remote under
DIR/work/<id>/. Ctrl-C cancels every run and still writes a report marked
partial.

flags:`

func cmdEval(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		switch args[0] {
		case "compare":
			return cmdEvalCompare(args[1:], stdout, stderr)
		case "import-swebench":
			return cmdEvalImport(args[1:], stdout, stderr)
		}
	}
	fs := newFlags("eval", evalHelp, stdout, stderr)
	var rf runFlags
	rf.register(fs)
	fs.hidden["runs-dir"] = true // eval's runs go to --out DIR/runs
	bpFile := fs.String("blueprint", "", "blueprint file (or built-in name) to measure")
	out := fs.String("out", "", "output directory (report.json, report.md, runs/)")
	conc := fs.Int("concurrency", 1, "tasks run at once")
	files, code, ok := fs.parseN(args, 1, 1)
	if !ok {
		return code
	}
	if *bpFile == "" || *out == "" || *conc < 1 {
		return fs.usageError("--blueprint and --out are required, --concurrency at least 1")
	}
	*out = absPath(*out) // its runs and review queue: nodes work in other directories
	if err := sandbox.Platform(); err != nil {
		fmt.Fprintln(stderr, "sandgate:", err)
		return exitUsage
	}
	set, err := eval.LoadTasks(files[0])
	if err != nil {
		fmt.Fprintln(stderr, err)
		return exitUsage
	}
	bp, err := resolveBlueprint(rf.registry(), *bpFile)
	if err != nil {
		return reportLoadError(stderr, err)
	}
	if err := checkTaskModels(bp, set, &rf); err != nil {
		fmt.Fprintln(stderr, "sandgate:", err)
		return exitUsage
	}
	r := rf.redactor(bp.Credentials)
	stdout, stderr = r.Writer(stdout), r.Writer(stderr)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	pr := newEvalProgress(stdout)
	rep, err := eval.Run(ctx, set, eval.Options{Blueprint: bp.File, Source: bp.Source, Out: *out, Concurrency: *conc,
		Model: rf.model, AllowUnsandboxed: rf.allowUnsandboxed, Progress: pr.update,
		Run: eval.DefaultRun(eval.DefaultRunOptions{Config: rf.runConfig("", "", nil, stderr)})})
	pr.finish()
	if err != nil {
		fmt.Fprintln(stderr, "sandgate eval:", err)
		if rep == nil {
			return exitFailed
		}
	}
	if rf.json() {
		b, _ := json.MarshalIndent(rep.Summary, "", "  ")
		fmt.Fprintln(stdout, string(termtext.JSON(b)))
	} else {
		s := rep.Summary
		fmt.Fprintf(stdout, "\nresolved %d/%d, handed off %d, false promotions %d, invalid %d, errors %d (tokens %d, cost %.4f)\nreport: %s\n",
			s.Resolved, s.Measured, s.HandedOff, s.FalsePromotions, s.Invalid, s.Errors, s.Tokens, s.Cost, termtext.Line(filepath.Join(*out, "report.md")))
	}
	if rep.Summary.Partial {
		return exitCanceled
	}
	return exitOK
}

// evalProgress prints tasks done/total, running and an ETA: rewritten in
// place on a terminal, one line per finished task otherwise.
type evalProgress struct {
	w   io.Writer
	tty bool
}

func newEvalProgress(w io.Writer) *evalProgress {
	return &evalProgress{w: w, tty: newProgress(w, true).tty}
}

func (p *evalProgress) update(pr eval.Progress) {
	eta := "?"
	if pr.Done > 0 {
		left := time.Duration(int64(pr.Elapsed) / int64(pr.Done) * int64(pr.Total-pr.Done))
		eta = left.Round(time.Second).String()
	}
	line := fmt.Sprintf("[%d/%d] running: %s  eta %s", pr.Done, pr.Total, termtext.Line(orElse(strings.Join(pr.Running, ", "), "-")), eta)
	if p.tty {
		fmt.Fprintf(p.w, "\r\033[K%s", line)
		if pr.Last != nil {
			fmt.Fprintf(p.w, "\r\033[K%s: %s\n%s", termtext.Line(pr.Last.ID), termtext.Line(string(pr.Last.Status)), line)
		}
		return
	}
	if pr.Last != nil {
		fmt.Fprintf(p.w, "[%d/%d] %s: %s (%d ms)\n", pr.Done, pr.Total, termtext.Line(pr.Last.ID), termtext.Line(string(pr.Last.Status)), pr.Last.DurationMS)
	}
}

func (p *evalProgress) finish() {
	if p.tty {
		fmt.Fprint(p.w, "\r\033[K")
	}
}

// checkTaskModels makes sandgate run's model-key check for every model the
// tasks run with (a task's own, else --model), before any task starts.
func checkTaskModels(bp *blueprint.Blueprint, set *eval.TaskSet, rf *runFlags) error {
	seen := map[string]bool{}
	for _, t := range set.Tasks {
		f := *rf
		if t.Model != "" {
			f.model = t.Model
		}
		if seen[f.model] {
			continue
		}
		seen[f.model] = true
		if err := checkModelKeys(bp, &f); err != nil {
			return fmt.Errorf("task %s: %w", t.ID, err)
		}
	}
	return nil
}
