package main

import (
	"fmt"
	"io"
	"io/fs"
	"runtime/debug"
	"strings"
	"text/tabwriter"

	"github.com/sandgate/sandgate/blueprint"
	"github.com/sandgate/sandgate/blueprints"
	"github.com/sandgate/sandgate/nodes"
)

// version is the module version and VCS revision the binary was built from.
func version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "sandgate (no build information)"
	}
	v := "sandgate " + orElse(bi.Main.Version, "(devel)")
	var rev, modified string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				modified = "+dirty"
			}
		}
	}
	if rev != "" {
		v += " (" + rev[:min(12, len(rev))] + modified + ")"
	}
	return v + " " + bi.GoVersion
}

func cmdVersion(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("version", "\n\nPrints the module version, the VCS revision (+dirty for a modified tree) and\nthe Go version the binary was built with.", stdout, stderr)
	if _, code, ok := fs.parseN(args, 0, 0); !ok {
		return code
	}
	fmt.Fprintln(stdout, version())
	return exitOK
}

// cmdBlueprints lists the blueprints shipped in the binary with their inputs.
func cmdBlueprints(args []string, stdout, stderr io.Writer) int {
	flags := newFlags("blueprints", "\n\nLists the blueprints built into this binary with their inputs; run,\nvalidate, graph and eval take these names wherever they take a file.", stdout, stderr)
	if _, code, ok := flags.parseN(args, 0, 0); !ok {
		return code
	}
	tw := tabwriter.NewWriter(stdout, 2, 4, 2, ' ', 0)
	for _, name := range builtinNames() {
		src, _ := fs.ReadFile(blueprints.FS, name+".yaml")
		bp, err := blueprint.Parse(name+".yaml", src, blueprint.WithTypes(nodes.Types()))
		if err != nil {
			fmt.Fprintf(stderr, "sandgate: built-in blueprint %s does not load: %v\n", name, err)
			return exitFailed
		}
		fmt.Fprintf(tw, "%s\t%s\n", name, bp.Description)
		for _, in := range bp.InputOrder {
			fmt.Fprintf(tw, "  --input %s=…\t%s\n", in, describeInput(bp.Inputs[in]))
		}
	}
	tw.Flush()
	fmt.Fprintln(stdout, "\nrun one with: sandgate run NAME --input NAME=VALUE ...")
	return exitOK
}

func describeInput(in *blueprint.Input) string {
	var parts []string
	switch {
	case in.Required:
		parts = append(parts, "required")
	case in.Default != nil:
		parts = append(parts, fmt.Sprintf("default %v", in.Default))
	default:
		parts = append(parts, "optional")
	}
	if in.Type != "string" {
		parts = append(parts, in.Type)
	}
	if in.Pattern != "" {
		parts = append(parts, "pattern "+in.Pattern)
	}
	s := strings.Join(parts, ", ")
	if in.Description != "" {
		s = in.Description + " (" + s + ")"
	}
	return s
}
