package main

import (
	"fmt"
	"io"
)

func cmdEvalCompare(args []string, stdout, stderr io.Writer) int {
	fmt.Fprintln(stderr, "todo")
	return exitUsage
}

func cmdEvalImport(args []string, stdout, stderr io.Writer) int {
	fmt.Fprintln(stderr, "todo")
	return exitUsage
}
