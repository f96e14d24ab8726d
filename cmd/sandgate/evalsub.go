package main

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/sandgate/sandgate/eval"
	"github.com/sandgate/sandgate/internal/termtext"
)

func cmdEvalCompare(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("eval compare", "A/report.json B/report.json", stderr)
	format := fs.String("format", "table", "output: table or json")
	files, err := parseInterspersed(fs, args)
	if err != nil {
		return exitUsage
	}
	if len(files) != 2 || (*format != "table" && *format != "json") {
		fs.Usage()
		return exitUsage
	}
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
	fs := newFlags("eval import-swebench", "FILE.jsonl --repos DIR [--out DIR]", stderr)
	repos := fs.String("repos", "", "directory holding the repositories as <owner>__<name> or <name>")
	out := fs.String("out", ".", "directory receiving tasks.yaml and hidden/<id>/")
	files, err := parseInterspersed(fs, args)
	if err != nil {
		return exitUsage
	}
	if len(files) != 1 || *repos == "" {
		fs.Usage()
		return exitUsage
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
