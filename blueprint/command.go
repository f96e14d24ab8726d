package blueprint

import (
	"fmt"
	"regexp"
	"strings"

	"gopkg.in/yaml.v3"
)

// Command field kinds. A command is either a shell command line (a YAML
// string, run by sh -c, which never takes templates) or the argv form, a
// mapping with the single key argv:
//
//	run: go test -json ./...                                  # shell line
//	run: {argv: [go, test, -json, "${{ inputs.packages }}"]}  # no shell
//
// In the argv form each item is exactly one argument of the program: a
// template inside an item renders into that one argument, never splits or
// reaches a shell. Templates there may only name inputs (inputs.<name>)
// that are strings and declare a pattern, so neither model output nor an
// unchecked value shapes a command.
const (
	KindCommand     Kind = "command"
	KindCommandList Kind = "command_list"
)

// Argv is a decoded argv-form command: the program and its arguments as
// written, before templates are rendered. A KindCommand field decodes to a
// string or an Argv; a KindCommandList field to a []any of those.
type Argv []string

// ArgvField is the Templates key of item i of the argv command in field,
// e.g. "run.argv[3]" or, for the second command of a list, "run[1].argv[3]".
func ArgvField(field string, i int) string { return fmt.Sprintf("%s.argv[%d]", field, i) }

// argvRefRE is the only expression allowed inside an argv template.
var argvRefRE = regexp.MustCompile(`^\s*inputs\.([a-z][a-z0-9_]*)\s*$`)

// argvRef is an input named by an argv template, checked once every input
// is known.
type argvRef struct {
	input string
	pos   Pos
	path  string
}

// command decodes one command; field is the Templates key prefix.
func (d *decoder) command(node *Node, field string, v *yaml.Node, path string) (any, bool) {
	v = resolveAlias(v)
	switch {
	case v.Kind == yaml.ScalarNode && v.ShortTag() == "!!str":
		if strings.Contains(v.Value, "${{") {
			d.r.errorf(posOf(v), path, "templates are not allowed in a shell command line (it would be parsed by sh): use the argv form, {argv: [program, arg, \"${{ inputs.name }}\"]}")
			return nil, false
		}
		return v.Value, true
	case v.Kind == yaml.MappingNode:
		if !d.keyPresent(v, "argv") {
			d.r.errorf(posOf(v), path, "expected {argv: [program, arg...]}")
			return nil, false
		}
		var argv Argv
		ok := false
		for _, p := range d.entries(v, path, []string{"argv"}) {
			seq := resolveAlias(p.value)
			if p.key.Value != "argv" {
				continue
			}
			if seq.Kind != yaml.SequenceNode || len(seq.Content) == 0 {
				d.r.errorf(posOf(seq), path+".argv", "argv is a non-empty list: the program, then one item per argument")
				return nil, false
			}
			items, good := d.strList(seq, path+".argv")
			argv, ok = Argv(items), good
			if ok {
				d.argvTemplates(node, field, seq, path+".argv")
			}
		}
		return argv, ok && argv != nil
	}
	d.r.errorf(posOf(v), path, "expected a command line (string) or {argv: [program, arg...]}, got %s", describe(v))
	return nil, false
}

// commandList decodes a single command or a list of them.
func (d *decoder) commandList(node *Node, field string, v *yaml.Node, path string) (any, bool) {
	v = resolveAlias(v)
	if v.Kind != yaml.SequenceNode {
		c, ok := d.command(node, field+"[0]", v, path)
		return []any{c}, ok
	}
	out := make([]any, 0, len(v.Content))
	ok := true
	for i, item := range v.Content {
		c, good := d.command(node, fmt.Sprintf("%s[%d]", field, i), item, fmt.Sprintf("%s[%d]", path, i))
		ok = ok && good
		out = append(out, c)
	}
	return out, ok
}

// argvTemplates queues the templates of an argv list, allowing only plain
// input references.
func (d *decoder) argvTemplates(node *Node, field string, seq *yaml.Node, path string) {
	for i, item := range seq.Content {
		item = resolveAlias(item)
		if !strings.Contains(item.Value, "${{") {
			continue
		}
		ip := fmt.Sprintf("%s[%d]", path, i)
		good := true
		for _, code := range templateCodes(item.Value) {
			m := argvRefRE.FindStringSubmatch(code)
			if m == nil {
				d.r.errorf(posOf(item), ip, "an argv template may only name an input, like ${{ inputs.packages }}; got ${{%s}}", code)
				good = false
				continue
			}
			d.argvRefs = append(d.argvRefs, argvRef{input: m[1], pos: posOf(item), path: ip})
		}
		if good {
			d.exprs = append(d.exprs, pendingExpr{node: item, path: ip, owner: node, field: ArgvField(field, i)})
		}
	}
}

// templateCodes returns the expressions of every ${{ }} in s; an
// unterminated one is left to the template compiler to report.
func templateCodes(s string) []string {
	var out []string
	for {
		i := strings.Index(s, "${{")
		if i < 0 {
			return out
		}
		j := strings.Index(s[i+3:], "}}")
		if j < 0 {
			return out
		}
		out = append(out, s[i+3:i+3+j])
		s = s[i+3+j+2:]
	}
}

// checkArgvRefs requires every input an argv template names to be a
// string input with a pattern: the pattern is what keeps a value such as
// "-exec" or "--upload-pack=..." from becoming an option.
func (d *decoder) checkArgvRefs() {
	for _, r := range d.argvRefs {
		in, ok := d.bp.Inputs[r.input]
		switch {
		case !ok:
			d.r.errorf(r.pos, r.path, "unknown input %q%s", r.input, didYouMean(r.input, d.bp.InputOrder))
		case in.Type != "string":
			d.r.errorf(r.pos, r.path, "inputs.%s is a %s; argv templates take string inputs with a pattern", r.input, in.Type)
		case in.Pattern == "":
			d.r.errorf(r.pos, r.path, "inputs.%s is used in a command: declare a pattern for it (e.g. pattern: '[./a-zA-Z0-9_-]+'), so a value like \"-exec\" or \"; rm\" is refused", r.input)
		}
	}
}

// compilePattern compiles an input's pattern; the whole value must match.
func compilePattern(p string) (*regexp.Regexp, error) {
	return regexp.Compile(`^(?:` + p + `)$`)
}

// CheckValue reports whether v satisfies the input's pattern (when it has
// one). Values of inputs without a pattern always pass.
func (in *Input) CheckValue(v any) error {
	if in.pattern == nil {
		return nil
	}
	s, ok := v.(string)
	if !ok || !in.pattern.MatchString(s) {
		return fmt.Errorf("input %s: %q does not match its pattern %s", in.Name, fmt.Sprint(v), in.Pattern)
	}
	return nil
}
