package blueprint

import (
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/expr-lang/expr/ast"
	"gopkg.in/yaml.v3"
)

// nameChecker finds references to undeclared inputs, unknown nodes and
// unknown output fields, so the messages can name them and suggest the
// closest match instead of printing generated struct types.
type nameChecker struct {
	env      *envSchema
	problems []nameProblem
	// refs are the node ids the expression names under outputs or
	// attempts; whole is set when it uses either map as a whole.
	refs            map[string]bool
	idents, members int
}

type nameProblem struct {
	at  int // rune offset in the expression
	msg string
}

func (c *nameChecker) Visit(node *ast.Node) {
	if id, ok := (*node).(*ast.IdentifierNode); ok && (id.Value == "outputs" || id.Value == "attempts") {
		c.idents++
	}
	m, ok := (*node).(*ast.MemberNode)
	if !ok {
		return
	}
	prop, ok := m.Property.(*ast.StringNode)
	if !ok {
		return
	}
	at := m.Property.Location().From
	if root, ok := m.Node.(*ast.IdentifierNode); ok {
		if root.Value == "outputs" || root.Value == "attempts" {
			c.members++
			if c.refs == nil {
				c.refs = map[string]bool{}
			}
			c.refs[prop.Value] = true
		}
		c.checkTop(root.Value, prop.Value, at)
		return
	}
	inner, ok := m.Node.(*ast.MemberNode)
	if !ok {
		return
	}
	root, ok := inner.Node.(*ast.IdentifierNode)
	id, ok2 := inner.Property.(*ast.StringNode)
	if !ok || !ok2 || root.Value != "outputs" {
		return
	}
	ns, known := c.env.perNode[id.Value]
	if !known {
		return // reported by the outer check
	}
	if _, has := ns.index[prop.Value]; !has {
		c.add(at, "node %s has no output %q%s (it has: %s)", id.Value, prop.Value,
			didYouMean(prop.Value, sortedKeys(ns.index)), strings.Join(sortedKeys(ns.index), ", "))
	}
}

func (c *nameChecker) checkTop(root, name string, at int) {
	var s *structSchema
	var what string
	switch root {
	case "inputs":
		s, what = c.env.inputs, "input %q is not declared under inputs%s"
	case "outputs":
		s, what = c.env.outputs, "unknown node %q in outputs%s"
	case "attempts":
		s, what = c.env.attempt, "unknown node %q in attempts%s"
	case "run":
		s, what = runSchema, "run has no field %q%s (it has: elapsed, tokens, node_runs, cost)"
	default:
		return
	}
	if _, ok := s.index[name]; !ok {
		c.add(at, what, name, didYouMean(name, sortedKeys(s.index)))
	}
}

func (c *nameChecker) add(at int, format string, args ...any) {
	c.problems = append(c.problems, nameProblem{at: at, msg: fmt.Sprintf(format, args...)})
}

var structTypeRE = regexp.MustCompile(`type struct \{.*\} has no field`)

// cleanExprMessage hides generated struct types from expr-lang messages.
func cleanExprMessage(msg string) string {
	return structTypeRE.ReplaceAllString(msg, "no such field:")
}

// valuePos maps a byte offset inside a scalar's value to a file position.
func (d *decoder) valuePos(v *yaml.Node, off int) Pos {
	if off > len(v.Value) {
		off = len(v.Value)
	}
	before := v.Value[:off]
	switch {
	case v.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0:
		k := strings.Count(before, "\n")
		colInLine := utf8.RuneCountInString(before[strings.LastIndexByte(before, '\n')+1:])
		line := v.Line + 1 + k
		indent := 0
		if line-1 < len(d.r.lines) {
			src := d.r.lines[line-1]
			indent = len(src) - len(strings.TrimLeft(src, " "))
		}
		return Pos{Line: line, Col: indent + colInLine + 1}
	case v.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) != 0:
		return Pos{Line: v.Line, Col: v.Column + 1 + utf8.RuneCountInString(before)}
	}
	return Pos{Line: v.Line, Col: v.Column + utf8.RuneCountInString(before)}
}
