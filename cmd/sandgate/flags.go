package main

import (
	"flag"
	"fmt"
	"io"
)

// newFlags makes a flag set whose errors go to stderr and never exit.
func newFlags(name, args string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: sandgate %s [flags] %s\n", name, args)
		fs.PrintDefaults()
	}
	return fs
}

// parseInterspersed parses flags wherever they appear among the positional
// arguments, so "validate a.yaml --format json" works as users expect.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// exactlyOne parses flags and requires exactly one positional argument,
// printing the usage otherwise.
func exactlyOne(fs *flag.FlagSet, args []string) ([]string, bool) {
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return nil, false
	}
	if len(pos) != 1 {
		fs.Usage()
		return nil, false
	}
	return pos, true
}
