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

	"github.com/sandgate/sandgate/runtime"
)

func cmdShow(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("show", "RUN_DIR", stderr)
	asJSON := fs.Bool("json", false, "print the summary as JSON")
	dirs, ok := exactlyOne(fs, args)
	if !ok {
		return exitUsage
	}
	sum, err := runtime.Summarize(dirs[0])
	if err != nil {
		fmt.Fprintln(stderr, "sandgate:", err)
		return exitUsage
	}
	if *asJSON {
		b, _ := json.MarshalIndent(sum, "", "  ")
		fmt.Fprintln(stdout, string(b))
		return exitOK
	}
	fmt.Fprintf(stdout, "run %s (%s), started %s\n\n", sum.RunID, sum.Blueprint, sum.Started.Format("2006-01-02 15:04:05"))
	tw := tabwriter.NewWriter(stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NODE\tATTEMPT\tOUTCOME\tDURATION\tTOKENS\tEDGE\tOUTPUTS")
	for _, a := range sum.Attempts {
		out := string(a.Outcome)
		switch {
		case a.Canceled:
			out = "canceled"
		case a.Error != "":
			out = "error"
		case out == "":
			out = "running"
		}
		edge := ""
		if a.To != "" {
			edge = a.Edge + " → " + a.To
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%d ms\t%d\t%s\t%s\n", a.Node, a.Attempt, out, a.DurationMS, a.Tokens, edge, compactOutputs(a.Outputs))
	}
	tw.Flush()
	fmt.Fprintf(stdout, "\nstatus: %s", sum.Status)
	if sum.Reason != "" {
		fmt.Fprintf(stdout, " (%s)", sum.Reason)
	}
	fmt.Fprintf(stdout, "\nnode runs: %d, tokens: %d, duration: %d ms\n", sum.NodeRuns, sum.Tokens, sum.DurationMS)
	if v := verifySummary(filepath.Join(dirs[0], "verify.json")); v != "" {
		fmt.Fprintf(stdout, "verify.json: %s\n", v)
	}
	if sum.Status == runtime.StatusHandedOff {
		fmt.Fprintf(stdout, "hand-off: %s\n", filepath.Join(dirs[0], "handoff.md"))
	}
	return exitOK
}

func cmdRuns(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("runs", "", stderr)
	runsDir := fs.String("runs-dir", filepath.Join(".sandgate", "runs"), "directory holding run directories")
	if _, err := parseInterspersed(fs, args); err != nil {
		return exitUsage
	}
	list, err := runtime.ListRuns(*runsDir)
	if err != nil {
		fmt.Fprintln(stderr, "sandgate:", err)
		return exitUsage
	}
	tw := tabwriter.NewWriter(stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "RUN\tBLUEPRINT\tSTATUS\tNODE RUNS\tDURATION\tREASON")
	for _, s := range list {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d ms\t%s\n", s.RunID, filepath.Base(s.Blueprint), s.Status, s.NodeRuns, s.DurationMS, s.Reason)
	}
	tw.Flush()
	return exitOK
}

func cmdCancel(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("cancel", "RUN_DIR", stderr)
	reason := fs.String("reason", "canceled with sandgate cancel", "why the run is stopped")
	dirs, ok := exactlyOne(fs, args)
	if !ok {
		return exitUsage
	}
	if err := runtime.RequestCancel(dirs[0], *reason); err != nil {
		fmt.Fprintln(stderr, "sandgate:", err)
		return exitUsage
	}
	fmt.Fprintf(stdout, "cancel requested: %s\n", dirs[0])
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
