package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/sandgate/sandgate/blueprint"
	"github.com/sandgate/sandgate/nodes"
)

func cmdGraph(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("graph", "FILE", stderr)
	format := fs.String("format", "mermaid", "output format: mermaid or dot")
	files, err := parseInterspersed(fs, args)
	if err != nil {
		return exitUsage
	}
	if len(files) != 1 || (*format != "mermaid" && *format != "dot") {
		fs.Usage()
		return exitUsage
	}
	bp, err := loadBlueprint(files[0])
	if err != nil {
		return reportLoadError(stderr, err)
	}
	if *format == "dot" {
		fmt.Fprint(stdout, bp.DOT())
	} else {
		fmt.Fprint(stdout, bp.Mermaid())
	}
	return exitOK
}

func cmdSchema(args []string, stdout, stderr io.Writer) int {
	if len(args) != 0 {
		fmt.Fprintln(stderr, "usage: sandgate schema")
		return exitUsage
	}
	stdout.Write(blueprint.JSONSchema(nodes.Types()))
	return exitOK
}

// reportLoadError prints a load failure the way validate does.
func reportLoadError(stderr io.Writer, err error) int {
	var ds blueprint.Diagnostics
	if errors.As(err, &ds) {
		fmt.Fprintln(stderr, ds.Pretty())
	} else {
		fmt.Fprintln(stderr, "sandgate:", err)
	}
	return exitUsage
}
