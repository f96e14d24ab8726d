package blueprint_test

import (
	"errors"
	"fmt"
	"maps"
	"strings"
	"testing"

	"github.com/sandgate/sandgate/blueprint"
)

// deepBlueprint puts code in a when: condition (the last edge of a, so
// the condition is checked and compiled) or, with template, in a's prompt.
func deepBlueprint(code string, template bool) string {
	if template {
		return "version: 1\nname: t\nstart: a\nnodes:\n  a: {type: agent, prompt: '${{ " + code + " }}', next: done}\n  done: {type: succeed}\n"
	}
	return "version: 1\nname: t\nstart: a\nnodes:\n  a:\n    type: shell\n    run: make\n    edges:\n      - {to: done, when: '" + code + "'}\n      - {to: done}\n  done: {type: succeed}\n"
}

// TestExprNestingLimit: the attack of issue 24 (a 1 MiB blueprint whose
// condition nests 524,288 parentheses, which overflowed the stack, a
// fatal error) and its relatives are refused with the position of the
// bracket too deep, before expr-lang's recursive parser sees them, in
// conditions and templates alike; nesting within the limit still works.
func TestExprNestingLimit(t *testing.T) {
	deep := func(open, close string, n int) string {
		return strings.Repeat(open, n) + "true" + strings.Repeat(close, n)
	}
	atDeep := fmt.Sprintf("expression nests deeper than %d levels of brackets", blueprint.MaxExprDepth)
	for _, c := range []struct {
		name, code string
		template   bool
		want       string // "" means valid
	}{
		{"524k parentheses", deep("(", ")", 1<<19), false, ":9:{col}: nodes.a.edges[0].when: " + atDeep},
		{"524k parentheses in a template", deep("(", ")", 1<<19), true, ":5:{col}: nodes.a.prompt: " + atDeep},
		{"lists", "len(" + deep("[", "]", 1000) + ") > 0", false, atDeep},
		{"maps", deep("{a: ", "}", 1000) + " != nil", false, atDeep},
		{"unary chain", strings.Repeat("!", 1<<19) + "true", false, "expression is 524292 bytes long; at most 4096 are allowed"},
		{"at the limit", deep("(", ")", blueprint.MaxExprDepth), false, ""},
		{"unary chain at the length limit", strings.Repeat("!", 4000) + "true", false, ""},
		{"ternaries", strings.Repeat("true ? false : ", 250) + "true", false, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			src := deepBlueprint(c.code, c.template)
			_, err := blueprint.Parse("deep.yaml", []byte(src), blueprint.WithTypes(testTypes))
			if c.want == "" {
				if err != nil {
					t.Fatalf("%.400v", err)
				}
				return
			}
			var ds blueprint.Diagnostics
			if !errors.As(err, &ds) {
				t.Fatalf("want diagnostics, got %.400v", err)
			}
			// The 33rd bracket is the one pointed at.
			line := src[strings.LastIndex(src[:strings.Index(src, c.code[:10])], "\n")+1:]
			col := strings.Index(line, c.code[:10]) + blueprint.MaxExprDepth + 1
			want := strings.ReplaceAll(c.want, "{col}", fmt.Sprint(col))
			if !strings.Contains(err.Error(), want) || len(err.Error()) > 2000 {
				t.Fatalf("got %.400v\nwant %q", err, want)
			}
			// What a terminal gets is a window of the megabyte-long line.
			if p := ds.Pretty(); len(p) > 1000 || !strings.Contains(p, "…\n") {
				t.Fatalf("Pretty is %d bytes:\n%.600s", len(p), p)
			}
		})
	}
}

// FuzzParseDeep feeds the loader blueprints that are deep (nested brackets
// of every kind, unary chains, nested ternaries, nested YAML flow
// collections, chains of merge keys) or wide (many keys, many edges), in
// conditions, templates and node config. Whatever the shape, Parse
// returns: a result or diagnostics, never a crash.
func FuzzParseDeep(f *testing.F) {
	f.Add(uint32(1<<19), uint8(0), uint8(0))
	f.Add(uint32(40), uint8(1), uint8(1))
	f.Add(uint32(10000), uint8(4), uint8(2))
	f.Add(uint32(100000), uint8(5), uint8(3))
	f.Add(uint32(3000), uint8(6), uint8(0))
	f.Fuzz(func(t *testing.T, n uint32, shape, where uint8) {
		n %= 1 << 20
		src := deepSource(int(n), shape, where)
		if len(src) > blueprint.MaxFileBytes {
			src = src[:blueprint.MaxFileBytes]
		}
		bp, err := blueprint.Parse("deep.yaml", []byte(src), blueprint.WithTypes(deepTypes))
		var ds blueprint.Diagnostics
		if err == nil && bp == nil || err != nil && !errors.As(err, &ds) {
			t.Fatalf("bp %v, err %v", bp, err)
		}
	})
}

// deepTypes are the test types and one whose data takes any value (and
// is walked for templates).
var deepTypes = func() blueprint.MapTypes {
	ts := maps.Clone(testTypes)
	ts["any"] = blueprint.NodeType{Name: "any", Fields: map[string]blueprint.Field{"data": {Kind: blueprint.KindAny}}}
	return ts
}()

// deepSource builds one deep or wide blueprint.
func deepSource(n int, shape, where uint8) string {
	code := ""
	switch shape % 8 {
	case 0:
		code = strings.Repeat("(", n) + "true" + strings.Repeat(")", n)
	case 1:
		code = "len(" + strings.Repeat("[", n) + strings.Repeat("]", n) + ") > 0"
	case 2:
		code = strings.Repeat("!", n) + "true"
	case 3:
		code = strings.Repeat("true ? false : ", n) + "true"
	case 4:
		code = strings.Repeat("1 + ", n) + "1 > 0"
	case 5:
		code = strings.Repeat("-", n) + "1 > 0"
	case 6:
		// Nested YAML flow collections in a node's config.
		return "version: 1\nname: t\nstart: a\nnodes:\n  a: {type: any, data: " + strings.Repeat("[", n) + "'${{ feedback }}'" + strings.Repeat("]", n) + ", next: done}\n  done: {type: succeed}\n"
	case 7:
		// A chain of merge keys, each mapping merging the one before.
		var b strings.Builder
		b.WriteString("version: 1\nname: t\nx0: &x0 {type: shell}\n")
		for i := 1; i <= n && b.Len() < blueprint.MaxFileBytes; i++ {
			fmt.Fprintf(&b, "x%d: &x%d {<<: *x%d}\n", i, i, i-1)
		}
		fmt.Fprintf(&b, "start: a\nnodes:\n  a: {<<: *x%d, run: make, next: done}\n  done: {type: succeed}\n", n)
		return b.String()
	}
	if where%2 == 1 {
		return deepBlueprint(code, true)
	}
	if where%4 == 2 {
		// Wide: the same condition on many edges.
		var b strings.Builder
		b.WriteString("version: 1\nname: t\nstart: a\nnodes:\n  a:\n    type: shell\n    run: make\n    edges:\n")
		for i := 0; i < 1000 && b.Len() < blueprint.MaxFileBytes; i++ {
			fmt.Fprintf(&b, "      - {to: done, when: '%s'}\n", code)
		}
		b.WriteString("      - {to: done}\n  done: {type: succeed}\n")
		return b.String()
	}
	return deepBlueprint(code, false)
}
