package blueprint

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/checker"
	"github.com/expr-lang/expr/compiler"
	"github.com/expr-lang/expr/conf"
	"github.com/expr-lang/expr/file"
	"github.com/expr-lang/expr/optimizer"
	"github.com/expr-lang/expr/parser"
	"github.com/expr-lang/expr/vm"
)

// Expr is a compiled, type-checked edge condition.
type Expr struct {
	Source  string
	Pos     Pos
	program *vm.Program
	env     *envSchema
}

// Eval evaluates the condition against a scope.
func (e *Expr) Eval(s *Scope) (bool, error) {
	env, err := e.env.value(s)
	if err != nil {
		return false, err
	}
	out, err := expr.Run(e.program, env)
	if err != nil {
		return false, fmt.Errorf("evaluate %q: %w", e.Source, err)
	}
	b, _ := out.(bool)
	return b, nil
}

// Template is a string with ${{ expression }} parts, compiled at load.
type Template struct {
	Source string
	parts  []templatePart
	env    *envSchema
}

type templatePart struct {
	literal string
	program *vm.Program
	env     *envSchema
}

// Render evaluates every expression part and joins the result.
func (t *Template) Render(s *Scope) (string, error) {
	var b strings.Builder
	for _, p := range t.parts {
		if p.program == nil {
			b.WriteString(p.literal)
			continue
		}
		env, err := p.env.value(s)
		if err != nil {
			return "", err
		}
		out, err := expr.Run(p.program, env)
		if err != nil {
			return "", fmt.Errorf("render %q: %w", t.Source, err)
		}
		if out != nil {
			fmt.Fprint(&b, out)
		}
	}
	return b.String(), nil
}

// compileExprs compiles every queued condition and template.
func (d *decoder) compileExprs() {
	env := d.bp.env
	for _, pe := range d.exprs {
		if pe.edge != nil {
			src := pe.node.Value
			prog, used, ok := d.compileOne(env, src, pe, 0, true)
			if ok {
				*pe.edge.When = Expr{Source: src, Pos: posOf(pe.node), program: prog, env: used}
			}
			continue
		}
		if t, ok := d.compileTemplate(env, pe); ok {
			pe.owner.Templates[pe.field] = t
		}
	}
}

func (d *decoder) compileTemplate(env *envSchema, pe pendingExpr) (*Template, bool) {
	src := pe.node.Value
	t := &Template{Source: src, env: env}
	rest, offset, ok := src, 0, true
	for {
		i := strings.Index(rest, "${{")
		if i < 0 {
			t.parts = append(t.parts, templatePart{literal: rest})
			break
		}
		t.parts = append(t.parts, templatePart{literal: rest[:i]})
		j := strings.Index(rest[i+3:], "}}")
		if j < 0 {
			d.r.errorf(d.valuePos(pe.node, offset+i), pe.path, "unterminated ${{ (close it with }})")
			return nil, false
		}
		code := rest[i+3 : i+3+j]
		if strings.TrimSpace(code) == "" {
			d.r.errorf(d.valuePos(pe.node, offset+i), pe.path, "empty ${{ }} template")
			ok = false
		} else if prog, used, good := d.compileOne(env, code, pe, offset+i+3, false); good {
			t.parts = append(t.parts, templatePart{program: prog, env: used})
		} else {
			ok = false
		}
		rest = rest[i+3+j+2:]
		offset += i + 3 + j + 2
	}
	return t, ok
}

// compileOne checks names first (for friendly messages) and then lets
// expr-lang type-check and compile. base is the byte offset of code inside
// the YAML scalar, for positions.
func (d *decoder) compileOne(env *envSchema, code string, pe pendingExpr, base int, asBool bool) (*vm.Program, *envSchema, bool) {
	// Before anything recursive reads it (see MaxExprDepth).
	if at, msg, bad := exprTooDeep(code); bad {
		d.r.errorf(d.valuePos(pe.node, base+at), pe.path, "%s", msg)
		return nil, nil, false
	}
	// One config serves parsing and checking, so each expression is parsed
	// once (expr.Compile would parse it again).
	config := conf.CreateNew()
	tree, err := parser.ParseWithConfig(code, config)
	if err != nil {
		d.exprError(err, code, pe, base)
		return nil, nil, false
	}
	nc := &nameChecker{env: env}
	ast.Walk(&tree.Node, nc)
	for _, p := range nc.problems {
		d.r.errorf(d.valuePos(pe.node, base+runeToByte(code, p.at)), pe.path, "%s", p.msg)
	}
	if len(nc.problems) > 0 {
		return nil, nil, false
	}
	if nc.idents <= nc.members {
		env = d.subEnv(nc.refs)
	}
	expr.Env(env.zero)(config)
	if asBool {
		expr.AsBool()(config)
	}
	config.Check()
	prog, err := compileTree(tree, config)
	if err != nil {
		d.exprError(err, code, pe, base)
		return nil, nil, false
	}
	return prog, env, true
}

// compileTree does what expr.Compile does after parsing.
func compileTree(tree *parser.Tree, config *conf.Config) (*vm.Program, error) {
	if _, err := new(checker.Checker).PatchAndCheck(tree, config); err != nil {
		return nil, err
	}
	if config.Optimize {
		if err := optimizer.Optimize(&tree.Node, config); err != nil {
			return nil, err
		}
	}
	return compiler.Compile(tree, config)
}

// subEnv returns (and caches) the environment holding only the named nodes.
func (d *decoder) subEnv(refs map[string]bool) *envSchema {
	ids := make([]string, 0, len(refs))
	for id := range refs {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	key := strings.Join(ids, ",")
	if e, ok := d.envs[key]; ok {
		return e
	}
	if refs == nil {
		refs = map[string]bool{}
	}
	e := buildEnvFor(d.bp, d.types, refs, d.bp.env)
	if d.envs == nil {
		d.envs = map[string]*envSchema{}
	}
	d.envs[key] = e
	return e
}

func (d *decoder) exprError(err error, code string, pe pendingExpr, base int) {
	var fe *file.Error
	if errors.As(err, &fe) {
		msg := boolHint(cleanExprMessage(fe.Message))
		d.r.errorf(d.valuePos(pe.node, base+runeToByte(code, fe.From)), pe.path, "%s", msg)
		return
	}
	d.r.errorf(d.valuePos(pe.node, base), pe.path, "%s", boolHint(cleanExprMessage(err.Error())))
}

func boolHint(msg string) string {
	if strings.HasPrefix(msg, "expected bool") {
		return "a condition must be true or false: " + msg
	}
	return msg
}

func runeToByte(s string, runes int) int {
	n := 0
	for i := range s {
		if n == runes {
			return i
		}
		n++
	}
	return len(s)
}
