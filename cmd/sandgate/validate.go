package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/sandgate/sandgate/blueprint"
	"github.com/sandgate/sandgate/internal/termtext"
	"github.com/sandgate/sandgate/nodes"
)

// loadBlueprint loads a file, or a built-in blueprint by name, with the
// built-in node types.
func loadBlueprint(path string) (*blueprint.Blueprint, error) {
	return resolveBlueprint(nodes.NewRegistry(), path)
}

type validateSummary struct {
	File          string                `json:"file"`
	Valid         bool                  `json:"valid"`
	Name          string                `json:"name,omitempty"`
	Nodes         int                   `json:"nodes,omitempty"`
	WorstCaseRuns int                   `json:"worst_case_runs,omitempty"`
	Diagnostics   blueprint.Diagnostics `json:"diagnostics"`
}

func cmdValidate(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("validate", "FILE|NAME...\n\nChecks blueprint files, or built-in blueprints by name, against the node\ntypes built into this binary, and reports every problem as\nfile:line:col: field: problem. Exit 2 when any is invalid.\n\nflags:", stdout, stderr)
	format := fs.format("text", "json")
	files, code, ok := fs.parseN(args, 1, -1)
	if !ok {
		return code
	}
	code = exitOK
	var out []validateSummary
	for _, f := range files {
		s := validateOne(f)
		if !s.Valid {
			code = exitUsage
		}
		out = append(out, s)
		if *format == "text" {
			printSummary(stdout, stderr, s)
		}
	}
	if *format == "json" {
		b, _ := json.MarshalIndent(out, "", "  ")
		fmt.Fprintln(stdout, string(termtext.JSON(b)))
	}
	return code
}

func validateOne(path string) validateSummary {
	bp, err := loadBlueprint(path)
	return summarizeLoad(path, bp, err)
}

// summarizeLoad is the validation summary of a blueprint loaded from path.
func summarizeLoad(path string, bp *blueprint.Blueprint, err error) validateSummary {
	s := validateSummary{File: path, Diagnostics: blueprint.Diagnostics{}}
	if err != nil {
		var ds blueprint.Diagnostics
		if !errors.As(err, &ds) {
			ds = blueprint.Diagnostics{{File: path, Severity: blueprint.SeverityError, Message: err.Error()}}
		}
		s.Diagnostics = ds
		return s
	}
	s.Valid, s.Name, s.Nodes, s.WorstCaseRuns = true, bp.Name, len(bp.Nodes), bp.WorstCaseRuns
	s.Diagnostics = append(s.Diagnostics, bp.Warnings...)
	return s
}

func printSummary(stdout, stderr io.Writer, s validateSummary) {
	if len(s.Diagnostics) > 0 {
		fmt.Fprintln(stderr, s.Diagnostics.Pretty())
	}
	if s.Valid {
		// The name is the blueprint's, which may be a hostile repository's.
		fmt.Fprintf(stdout, "ok: %s: %s, %d nodes, worst case %d node runs\n", termtext.Line(s.File), termtext.Line(s.Name), s.Nodes, s.WorstCaseRuns)
		return
	}
	fmt.Fprintf(stderr, "invalid: %s: %d problem(s)\n", s.File, len(s.Diagnostics.Errors()))
}
