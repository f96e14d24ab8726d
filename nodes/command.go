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

// commandOf reads a decoded KindCommand value.
func commandOf(v any, field string) command {
	if a, ok := v.(blueprint.Argv); ok {
		return command{field: field, argv: a}
	}
	s, _ := v.(string)
	return command{field: field, line: s}
}

// commandsOf reads a decoded KindCommandList value.
func commandsOf(v any, field string) []command {
	items, _ := v.([]any)
	out := make([]command, len(items))
	for i, it := range items {
		out[i] = commandOf(it, fmt.Sprintf("%s[%d]", field, i))
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
