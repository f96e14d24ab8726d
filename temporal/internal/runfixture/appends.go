package runfixture

import (
	"fmt"
	"strings"
)

// AppendsBP is a chain of sandboxed shell nodes, one a line: each appends
// its line, its own name, to file (the first writes the file anew), after
// running wait[name] where there is one (a shell command: a sleep, so a
// test can land a kill mid-node). A check node then fails the run unless
// file holds exactly those lines in order: a node that ran twice on one
// workspace, or an edit lost in a move, fails it.
func AppendsBP(name, file string, lines []string, wait map[string]string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "version: 1\nname: %s\nstart: %s\nnodes:\n", name, lines[0])
	for i, l := range lines {
		next, op := "check", ">>"
		if i+1 < len(lines) {
			next = lines[i+1]
		}
		if i == 0 {
			op = ">"
		}
		run := fmt.Sprintf("echo %s %s %s", l, op, file)
		if w := wait[l]; w != "" {
			run = w + "; " + run
		}
		fmt.Fprintf(&b, "  %s: {type: shell, run: %q, next: %s}\n", l, run, next)
	}
	fmt.Fprintf(&b, `  check:
    type: shell
    run: |
      [ "$(tr -d '\n' < %s)" = %s ]
    on_pass: done
    on_fail: broken
  done: {type: succeed}
  broken: {type: fail, reason: %s is not exactly %s}
`, file, strings.Join(lines, ""), file, strings.Join(lines, " "))
	return b.String()
}
