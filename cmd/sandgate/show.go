package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/sandgate/sandgate/internal/termtext"
	"github.com/sandgate/sandgate/runtime"
)

func cmdShow(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("show", "RUN_ID|RUN_DIR\n\nPrints a run's timeline (each node attempt: outcome, duration, tokens, the edge\ntaken, outputs), its answers, status, totals and verdict, and for a handed-off\nrun the start of its hand-off.\n\nflags:", stdout, stderr)
	format := fs.format("text", "json")
	runsDir := fs.String("runs-dir", "", "directory holding run directories (default: the current repository's, see run --help)")
	dirs, code, ok := fs.parseN(args, 1, 1)
	if !ok {
		return code
	}
	dir, err := runDir(dirs[0], *runsDir)
	if err == nil {
		dirs[0] = dir
	}
	sum, err := summarize(dir, err)
	if err != nil {
		fmt.Fprintln(stderr, "sandgate:", err)
		return exitUsage
	}
	if *format == "json" {
		b, _ := json.MarshalIndent(sum, "", "  ")
		fmt.Fprintln(stdout, string(termtext.JSON(b)))
		return exitOK
	}
	fmt.Fprintf(stdout, "run %s (%s, %s), started %s\n\n", termtext.Line(sum.RunID), termtext.Line(sum.BlueprintName), termtext.Line(sum.Blueprint), sum.Started.Format("2006-01-02 15:04:05"))
	if len(sum.Labels) > 0 {
		fmt.Fprintf(stdout, "labels: %s\n\n", termtext.Line(labelText(sum.Labels)))
	}
	tw := tabwriter.NewWriter(stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NODE\tATTEMPT\tOUTCOME\tDURATION\tTOKENS\tEDGE\tOUTPUTS")
	for _, a := range sum.Attempts {
		out := string(a.Outcome)
		switch {
		case a.Canceled:
			out = "canceled"
		case a.Error != "":
			out = "error"
		case a.TimedOut:
			out = "timed out" // a fail the runtime gave, not the node
		case out == "":
			out = "running"
		}
		edge := ""
		if a.To != "" {
			edge = a.Edge + " → " + a.To
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%d ms\t%d\t%s\t%s\n", termtext.Line(a.Node), a.Attempt, termtext.Line(out), a.DurationMS, a.Tokens, termtext.Line(edge), termtext.Line(compactOutputs(a.Outputs)))
	}
	tw.Flush()
	for i, a := range sum.Answers {
		if i == 0 {
			fmt.Fprintln(stdout)
		}
		fmt.Fprintf(stdout, "answered by %s at %s: %s gets the note %q\n", termtext.Line(a.By), a.Time.Format("2006-01-02 15:04:05"), termtext.Line(a.Node), a.Note)
	}
	fmt.Fprintf(stdout, "\nstatus: %s", termtext.Line(string(sum.Status)))
	// A hand-off's reason may be an agent's words: the lead below quotes
	// it after the harness's own account.
	if sum.Reason != "" && sum.Status != runtime.StatusHandedOff {
		fmt.Fprintf(stdout, " (%s)", termtext.Short(sum.Reason, maxReason))
	}
	if sum.Status == runtime.StatusInterrupted {
		fmt.Fprintf(stdout, "\nresume with: sandgate resume %s", termtext.Line(dirs[0]))
	}
	fmt.Fprintf(stdout, "\nnode runs: %d, tokens: %d, cost: $%.4f, duration: %d ms (workspace set-up %d ms, wrap-up %d ms)\n",
		sum.NodeRuns, sum.Tokens, sum.Cost, sum.DurationMS, sum.WorkspaceMS, sum.FinishMS)
	if v := verifySummary(filepath.Join(dirs[0], "verify.json")); v != "" {
		fmt.Fprintf(stdout, "verify.json: %s\n", termtext.Line(v))
	}
	if sum.Status == runtime.StatusHandedOff {
		printHandoffLead(stdout, dirs[0])
		fmt.Fprintf(stdout, "hand-off: %s\n", termtext.Line(filepath.Join(dirs[0], "handoff.md")))
	}
	return exitOK
}

// printHandoffLead prints the start of a hand-off: the outcome, the
// commands that take the change over, how to answer, then the task and
// the reason as quotations (see runtime.Handoff.Lead), with any control
// character written out.
func printHandoffLead(w io.Writer, dir string) {
	var h runtime.Handoff
	b, err := os.ReadFile(filepath.Join(dir, "handoff.json"))
	if err != nil || json.Unmarshal(b, &h) != nil {
		return
	}
	fmt.Fprintf(w, "\n%s\n", termtext.Text(strings.TrimRight(h.Lead(), "\n")))
}

// maxReason caps a reason in a status line or a table cell (in runes);
// sandgate show and the run's files have it whole.
const maxReason = 200

func cmdRuns(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("runs", "\n\nLists runs, newest first: id, blueprint name, status (a run whose harness\ndied is interrupted), node runs, duration (the workspace step included),\ncost and why it ended.\n\nflags:", stdout, stderr)
	var dirs listFlag
	fs.Var(&dirs, "runs-dir", "directory holding run directories (repeatable; default: the current repository's, see run --help)")
	format := fs.format("text", "json")
	if _, code, ok := fs.parseN(args, 0, 0); !ok {
		return code
	}
	if len(dirs) == 0 {
		dirs = listFlag{defaultRunsDir(".")}
	}
	var list []*runtime.Summary
	for _, d := range dirs {
		l, err := runtime.ListRuns(d)
		if err != nil {
			fmt.Fprintln(stderr, "sandgate:", err)
			return exitUsage
		}
		list = append(list, l...)
	}
	sort.SliceStable(list, func(i, j int) bool { return list[i].Started.After(list[j].Started) })
	if *format == "json" {
		for _, s := range list {
			s.MarkInterrupted()
		}
		b, _ := json.MarshalIndent(orEmpty(list), "", "  ")
		fmt.Fprintln(stdout, string(termtext.JSON(b)))
		return exitOK
	}
	tw := tabwriter.NewWriter(stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "RUN\tBLUEPRINT\tSTATUS\tNODE RUNS\tDURATION\tCOST\tREASON")
	for _, s := range list {
		reason := s.Reason
		if s.MarkInterrupted() {
			reason = "the harness stopped; resume with: sandgate resume " + s.Dir
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d ms\t$%.4f\t%s\n", termtext.Line(s.RunID), termtext.Line(orElse(s.BlueprintName, filepath.Base(s.Blueprint))), termtext.Line(string(s.Status)), s.NodeRuns, s.DurationMS, s.Cost, termtext.Short(reason, maxReason))
	}
	tw.Flush()
	return exitOK
}

func cmdCancel(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("cancel", "RUN_ID|RUN_DIR\n\nAsks a run to stop from another process: it ends canceled and its box's\nprocesses die.\n\nflags:", stdout, stderr)
	reason := fs.String("reason", "canceled with sandgate cancel", "why the run is stopped")
	runsDir := fs.String("runs-dir", "", "directory holding run directories (default: the current repository's, see run --help)")
	dirs, code, ok := fs.parseN(args, 1, 1)
	if !ok {
		return code
	}
	dir, err := runDir(dirs[0], *runsDir)
	if err == nil {
		dirs[0] = dir
		err = runtime.RequestCancel(dir, *reason)
	}
	if err != nil {
		fmt.Fprintln(stderr, "sandgate:", err)
		return exitUsage
	}
	fmt.Fprintf(stdout, "cancel requested: %s\n", termtext.Line(dirs[0]))
	return exitOK
}

// compactOutputs renders an attempt's scalar outputs (counts, flags) on one
// line, e.g. "tool_calls=6 turns=6" for an agent or "failed=0 passed=2".
func compactOutputs(o map[string]any) string {
	keys := make([]string, 0, len(o))
	for k, v := range o {
		switch v.(type) {
		case float64, bool:
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s=%v", k, o[k])
	}
	return strings.Join(parts, " ")
}

// verifySummary renders verify.json without its per-gate details.
func verifySummary(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	var m map[string]any
	if json.Unmarshal(b, &m) != nil {
		return strings.TrimSpace(string(b))
	}
	delete(m, "gates")
	out, _ := json.Marshal(m)
	return string(out)
}

// runDir resolves a run id (looked up in runsDir, default the current
// repository's) or a run directory path.
func runDir(arg, runsDir string) (string, error) {
	if st, err := os.Stat(filepath.Join(arg, "events.jsonl")); err == nil && st.Mode().IsRegular() {
		return arg, nil
	}
	if strings.ContainsAny(arg, `/\`) || arg == "." || arg == ".." {
		return "", fmt.Errorf("%s is not a run directory (no events.jsonl)", arg)
	}
	if runsDir == "" {
		runsDir = defaultRunsDir(".")
	}
	dir := filepath.Join(runsDir, arg)
	if _, err := os.Stat(filepath.Join(dir, "events.jsonl")); err != nil {
		return "", fmt.Errorf("no run %s in %s (sandgate runs lists them; --runs-dir names another directory)", arg, runsDir)
	}
	return dir, nil
}

// summarize summarizes dir and marks it interrupted when its harness died.
func summarize(dir string, err error) (*runtime.Summary, error) {
	if err != nil {
		return nil, err
	}
	s, err := runtime.Summarize(dir)
	if err != nil {
		return nil, err
	}
	s.MarkInterrupted()
	return s, nil
}

// orEmpty makes a nil list encode as [] rather than null.
func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
