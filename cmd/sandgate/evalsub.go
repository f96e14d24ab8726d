package main

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/sandgate/sandgate/eval"
	"github.com/sandgate/sandgate/internal/termtext"
)

func cmdEvalCompare(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("eval compare", "A/report.json B/report.json\n\nCompares two eval reports task by task: newly resolved, newly broken, cost.\n\nflags:", stdout, stderr)
	format := fs.format("text", "json", "table")
	files, code, ok := fs.parseN(args, 2, 2)
	if !ok {
		return code
	}
	var err error
	var reps [2]*eval.Report
	for i, f := range files {
		if reps[i], err = eval.ReadReport(f); err != nil {
			fmt.Fprintln(stderr, "sandgate:", err)
			return exitUsage
		}
	}
	c := eval.Compare(reps[0], reps[1])
	if *format == "json" {
		b, _ := json.MarshalIndent(c, "", "  ")
		fmt.Fprintln(stdout, string(termtext.JSON(b)))
		return exitOK
	}
	c.Table(termtext.Writer{W: stdout}) // task ids and reasons come from the reports
	return exitOK
}

func cmdEvalImport(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("eval import-swebench", "FILE.jsonl --repos DIR [--out DIR]\n\nTurns SWE-bench instances into an eval task file (tasks.yaml) with each task's\nheld-out tests under hidden/<id>/.\n\nflags:", stdout, stderr)
	repos := fs.String("repos", "", "directory holding the repositories as <owner>__<name> or <name>")
	out := fs.String("out", ".", "directory receiving tasks.yaml and hidden/<id>/")
	files, code, ok := fs.parseN(args, 1, 1)
	if !ok {
		return code
	}
	if *repos == "" {
		return fs.usageError("--repos DIR is required")
	}
	res, err := eval.ImportSWEBench(files[0], *repos, *out)
	if err != nil {
		fmt.Fprintln(stderr, "sandgate:", err)
		return exitFailed
	}
	for _, s := range res.Skipped {
		fmt.Fprintf(stdout, "skipped %s: %s\n", termtext.Line(s.ID), termtext.Line(s.Reason))
	}
	fmt.Fprintf(stdout, "imported %d task(s) into %s (%d skipped)\n", res.Imported, termtext.Line(res.File), len(res.Skipped))
	return exitOK
}
