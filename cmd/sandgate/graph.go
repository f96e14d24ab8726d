package main

import (
	"errors"
	"fmt"
	"github.com/sandgate/sandgate/internal/termtext"
	"io"

	"github.com/sandgate/sandgate/blueprint"
	"github.com/sandgate/sandgate/nodes"
)

func cmdGraph(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("graph", "FILE|NAME\n\nDraws a blueprint file, or a built-in blueprint by name, as a Mermaid or\nGraphviz DOT graph of its nodes and edges (retry edges with their bounds).\n\nflags:", stdout, stderr)
	format := fs.format("mermaid", "dot")
	files, code, ok := fs.parseN(args, 1, 1)
	if !ok {
		return code
	}
	bp, err := loadBlueprint(files[0])
	if err != nil {
		return reportLoadError(stderr, err)
	}
	// The labels quote the blueprint's conditions, which a repository
	// wrote: Mermaid leaves their control characters raw.
	if *format == "dot" {
		fmt.Fprint(stdout, termtext.Text(bp.DOT()))
	} else {
		fmt.Fprint(stdout, termtext.Text(bp.Mermaid()))
	}
	return exitOK
}

func cmdSchema(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("schema", "\n\nPrints the JSON Schema of the blueprint format, for editors\n(# yaml-language-server: $schema=...).", stdout, stderr)
	if _, code, ok := fs.parseN(args, 0, 0); !ok {
		return code
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
