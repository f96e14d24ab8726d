package blueprint_test

import (
	"strings"
	"testing"

	"github.com/sandgate/sandgate/blueprint"
)

var cmdTypes = blueprint.MapTypes{
	"cmd": {Name: "cmd", Fields: map[string]blueprint.Field{
		"run": {Kind: blueprint.KindCommand, Required: true, NoTemplate: true},
	}},
	"cmds": {Name: "cmds", Fields: map[string]blueprint.Field{
		"run": {Kind: blueprint.KindCommandList, Required: true, NoTemplate: true},
	}},
}

func cmdBlueprint(inputs, node string) string {
	return "version: 1\nname: c\ninputs:\n" + inputs + "start: a\nnodes:\n  a:\n" + node + "    next: done\n  done: {type: succeed}\n"
}

const pkgInput = "  pkg: {default: ./..., pattern: '[./a-z][./a-z0-9_-]*'}\n"

// TestArgvTemplates: only the argv form takes templates, only of inputs,
// and only of string inputs that declare a valid pattern their default meets.
func TestArgvTemplates(t *testing.T) {
	cases := []struct {
		name, inputs, node, want string
	}{
		{"argv ok", pkgInput, "    type: cmd\n    run: {argv: [go, test, \"${{ inputs.pkg }}\"]}\n", ""},
		{"list ok", pkgInput, "    type: cmds\n    run: [gofmt -l ., {argv: [go, vet, \"-x=${{ inputs.pkg }}\"]}]\n", ""},
		{"shell line refuses templates", pkgInput, "    type: cmd\n    run: go test ${{ inputs.pkg }}\n", "not allowed in a shell command line"},
		{"shell line in list refuses templates", pkgInput, "    type: cmds\n    run: [\"go vet ${{ inputs.pkg }}\"]\n", "not allowed in a shell command line"},
		{"argv names output", pkgInput, "    type: cmd\n    run: {argv: [echo, \"${{ feedback }}\"]}\n", "may only name an input"},
		{"argv expression", pkgInput, "    type: cmd\n    run: {argv: [echo, \"${{ inputs.pkg + ' x' }}\"]}\n", "may only name an input"},
		{"input without pattern", "  pkg: {default: ./...}\n", "    type: cmd\n    run: {argv: [go, test, \"${{ inputs.pkg }}\"]}\n", "declare a pattern"},
		{"int input", "  n: {type: int, default: 1}\n", "    type: cmd\n    run: {argv: [go, test, \"${{ inputs.n }}\"]}\n", "argv templates take string inputs"},
		{"bad regexp", "  pkg: {pattern: '[a-'}\n", "    type: cmd\n    run: go test\n", "invalid regular expression"},
		{"default misses pattern", "  pkg: {default: '-x', pattern: '[a-z]+'}\n", "    type: cmd\n    run: go test\n", "does not match the pattern"},
		{"empty argv", pkgInput, "    type: cmd\n    run: {argv: []}\n", "non-empty list"},
		{"argv is a string", pkgInput, "    type: cmd\n    run: {argv: go test}\n", "non-empty list"},
		{"unknown command key", pkgInput, "    type: cmd\n    run: {args: [go]}\n", "expected {argv:"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			bp, err := blueprint.Parse("c.yaml", []byte(cmdBlueprint(c.inputs, c.node)), blueprint.WithTypes(cmdTypes))
			if c.want == "" {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("want an error containing %q, got %v (bp %v)", c.want, err, bp != nil)
			}
		})
	}
}

// TestArgvRender: an argv item renders to exactly the input's value, one
// argument, whatever characters it holds.
func TestArgvRender(t *testing.T) {
	src := cmdBlueprint("  pkg: {default: ./..., pattern: '.*'}\n", "    type: cmd\n    run: {argv: [go, test, \"${{ inputs.pkg }}\"]}\n")
	bp, err := blueprint.Parse("c.yaml", []byte(src), blueprint.WithTypes(cmdTypes))
	if err != nil {
		t.Fatal(err)
	}
	n := bp.Nodes["a"]
	if argv, ok := n.Config["run"].(blueprint.Argv); !ok || len(argv) != 3 {
		t.Fatalf("run decoded as %#v", n.Config["run"])
	}
	tpl := n.Templates[blueprint.ArgvField("run", 2)]
	if tpl == nil {
		t.Fatalf("no template for run.argv[2]: %v", n.Templates)
	}
	v := "a b; $(touch /tmp/x) -rf"
	got, err := tpl.Render(&blueprint.Scope{Inputs: map[string]any{"pkg": v}})
	if err != nil || got != v {
		t.Fatalf("rendered %q, %v", got, err)
	}
	if err := bp.Inputs["pkg"].CheckValue("x"); err != nil {
		t.Fatal(err)
	}
}

// TestInputPatternWholeValue: a pattern must match the whole value, so a
// pattern for safe names cannot be satisfied by a prefix.
func TestInputPatternWholeValue(t *testing.T) {
	bp, err := blueprint.Parse("c.yaml", []byte(cmdBlueprint(pkgInput, "    type: cmd\n    run: go test\n")), blueprint.WithTypes(cmdTypes))
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"-exec", "./x; rm -rf /", "./x $(id)", "./a b", "./x\n-y"} {
		if bp.Inputs["pkg"].CheckValue(bad) == nil {
			t.Errorf("pattern accepted %q", bad)
		}
	}
}
