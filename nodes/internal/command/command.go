package command

import (
	"fmt"
	"strings"

	"github.com/sandgate/sandgate/blueprint"
	"github.com/sandgate/sandgate/internal/shellquote"
	"github.com/sandgate/sandgate/runtime"
)

// Command is a decoded command field ready to run: Field is the
// Templates key prefix, e.g. "run" or "run[1]"; Line a shell command
// line, or Argv an argv.
type Command blueprint.Command

// Of turns a decoded command field into a runnable command.
func Of(c blueprint.Command) Command { return Command(c) }

// List turns a decoded command list field into runnable commands.
func List(cs []blueprint.Command) []Command {
	out := make([]Command, len(cs))
	for i, c := range cs {
		out[i] = Of(c)
	}
	return out
}

// Args renders the command into the argv the box executes.
func (c Command) Args(in *runtime.Input) ([]string, error) {
	if c.Argv == nil {
		return []string{"sh", "-c", c.Line}, nil
	}
	out := make([]string, len(c.Argv))
	for i, a := range c.Argv {
		if t, ok := in.Spec.Templates[blueprint.ArgvField(c.Field, i)]; ok {
			s, err := t.Render(in.Scope)
			if err != nil {
				return nil, fmt.Errorf("%s argv[%d]: %w", c.Field, i, err)
			}
			a = s
		}
		out[i] = a
	}
	return out, nil
}

// Display is the command as written, for feedback and logs.
func (c Command) Display(args []string) string {
	if c.Argv == nil {
		return c.Line
	}
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = a
		if a == "" || strings.ContainsAny(a, " \t\n'\"\\$`;&|<>()*?[]#~!{}") {
			q[i] = Quote(a)
		}
	}
	return strings.Join(q, " ")
}

// IsGoTest reports whether the command runs go test.
func (c Command) IsGoTest() bool {
	if c.Argv != nil {
		return len(c.Argv) > 1 && c.Argv[0] == "go" && c.Argv[1] == "test"
	}
	return strings.Contains(c.Line, "go test")
}

// Quote quotes s as one word for sh (internal/shellquote: the one shell
// quoter).
func Quote(s string) string { return shellquote.Quote(s) }
