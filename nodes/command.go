package nodes

import (
	"fmt"
	"strings"

	"github.com/sandgate/sandgate/blueprint"
	"github.com/sandgate/sandgate/runtime"
)

// command is a node's run: key, a shell command line run by sh -c, or an
// argv (blueprint.Argv) executed directly, no shell, whose templated items
// each render to exactly one argument.
type command struct {
	field string // Templates key prefix, e.g. "run" or "run[1]"
	line  string
	argv  blueprint.Argv
}

// commandOf turns a decoded command field into a runnable command.
func commandOf(c blueprint.Command) command {
	return command{field: c.Field, line: c.Line, argv: c.Argv}
}

// commandsOf turns a decoded command list field into runnable commands.
func commandsOf(cs []blueprint.Command) []command {
	out := make([]command, len(cs))
	for i, c := range cs {
		out[i] = commandOf(c)
	}
	return out
}

// args renders the command into the argv the box executes.
func (c command) args(in *runtime.Input) ([]string, error) {
	if c.argv == nil {
		return []string{"sh", "-c", c.line}, nil
	}
	out := make([]string, len(c.argv))
	for i, a := range c.argv {
		if t, ok := in.Spec.Templates[blueprint.ArgvField(c.field, i)]; ok {
			s, err := t.Render(in.Scope)
			if err != nil {
				return nil, fmt.Errorf("%s argv[%d]: %w", c.field, i, err)
			}
			a = s
		}
		out[i] = a
	}
	return out, nil
}

// display is the command as written, for feedback and logs.
func (c command) display(args []string) string {
	if c.argv == nil {
		return c.line
	}
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = a
		if a == "" || strings.ContainsAny(a, " \t\n'\"\\$`;&|<>()*?[]#~!{}") {
			q[i] = shellQuote(a)
		}
	}
	return strings.Join(q, " ")
}

// isGoTest reports whether the command runs go test.
func (c command) isGoTest() bool {
	if c.argv != nil {
		return len(c.argv) > 1 && c.argv[0] == "go" && c.argv[1] == "test"
	}
	return strings.Contains(c.line, "go test")
}
