package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/sandgate/sandgate/sandbox"
)

func cmdSandbox(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("sandbox", "check", stderr)
	asJSON := fs.Bool("json", false, "print the report as JSON")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return exitUsage
	}
	if len(pos) != 1 || pos[0] != "check" {
		fs.Usage()
		return exitUsage
	}
	layers := sandbox.Check(context.Background())
	ok := true
	for _, l := range layers {
		ok = ok && l.OK
	}
	if *asJSON {
		b, _ := json.MarshalIndent(layers, "", "  ")
		fmt.Fprintln(stdout, string(b))
	} else {
		for _, l := range layers {
			mark := "ok  "
			if !l.OK {
				mark = "FAIL"
			}
			fmt.Fprintf(stdout, "%s %-20s %s\n", mark, l.Name, l.Detail)
		}
		if ok {
			fmt.Fprintln(stdout, "\nevery layer works: runs are confined.")
		} else {
			fmt.Fprintln(stdout, "\nsome layers are missing: sandgate refuses to run commands until they work (or a blueprint opts out with isolation: none and --allow-unsandboxed).")
		}
	}
	if !ok {
		return exitFailed
	}
	return exitOK
}
