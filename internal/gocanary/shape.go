package gocanary

import (
	"crypto/rand"
	"go/ast"
	"go/token"
	"math/big"
	"strconv"
	"strings"
	"unicode"
)

// The standalone canaries look like the package's own tests: a name made
// by changing one word of one of its test names (in its naming style,
// CamelCase or Under_scores), a failure message from one of its own
// t.Errorf or t.Fatalf formats with made-up values, and a place in one of
// its test files, on a blank line between declarations (no line moves).

// style is what a package's tests look like.
type style struct {
	names []string // top-level test names
	words []string // the words they are made of
	sites []site   // t.Errorf and t.Fatalf calls with a constant format
	// idents are every identifier spelled in the directory's Go files: a
	// canary's name must clash with none.
	idents map[string]bool
}

// site is one failure call of the package's tests: the method, the
// format literal as written, and the kinds of its verbs' arguments.
type site struct {
	method, literal string
	kinds           []byte
}

// fallbackWords fill in when a package's test names give too few words.
var fallbackWords = strings.Fields(`Parse Empty Header Value Limit Order Range Write Read Close Open
	Merge Split Join Trim Quote Escape Token Buffer Cache Store Index Query Match Route Frame Field
	Record Column Batch Queue Retry Timeout Config Option Format Encode Decode Count Sum Total
	Default Nested Unicode Large Small Zero Negative Boundary Overflow`)

// fallbackSite is used when no test of the package has a usable format.
var fallbackSite = site{method: "Errorf", literal: `"got %d, want %d"`, kinds: []byte("ii")}

func (s *style) learn(f *ast.File, src []byte) {
	for _, fn := range testFuncs(f) {
		if n := fn.decl.Name.Name; strings.HasPrefix(n, "Test") {
			s.names = append(s.names, n)
			for _, part := range strings.Split(n[len("Test"):], "_") {
				s.words = append(s.words, splitCamel(part)...)
			}
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok || len(call.Args) == 0 {
			return true
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		lit, isLit := call.Args[0].(*ast.BasicLit)
		if !ok || !isLit || lit.Kind != token.STRING || (sel.Sel.Name != "Errorf" && sel.Sel.Name != "Fatalf") {
			return true
		}
		if v, err := strconv.Unquote(lit.Value); err == nil {
			if kinds, ok := verbKinds(v); ok && len(kinds) == len(call.Args)-1 {
				s.sites = append(s.sites, site{method: sel.Sel.Name, literal: lit.Value, kinds: kinds})
			}
		}
		return true
	})
	for id := range identifiers(src) {
		s.idents[id] = true
	}
}

// splitCamel splits an identifier part into its words: "HTTPServerOK2"
// is HTTP, Server, OK2.
func splitCamel(s string) []string {
	r := []rune(s)
	var out []string
	start := 0
	for i := 1; i < len(r); i++ {
		lowerBefore := unicode.IsLower(r[i-1]) || unicode.IsDigit(r[i-1])
		acronymEnd := unicode.IsUpper(r[i-1]) && i+1 < len(r) && unicode.IsLower(r[i+1])
		if unicode.IsUpper(r[i]) && (lowerBefore || acronymEnd) {
			out = append(out, string(r[start:i]))
			start = i
		}
	}
	if start < len(r) {
		out = append(out, string(r[start:]))
	}
	return out
}

// verbKinds reads a format's verbs: i for an integer, s for a string, b
// for a bool, f for a float; ok is false for verbs the canary does not
// fill in (%w, %p, * widths, argument indexes).
func verbKinds(format string) ([]byte, bool) {
	var out []byte
	for i := 0; i < len(format); i++ {
		if format[i] != '%' {
			continue
		}
		i++
		for i < len(format) && strings.IndexByte("+-# 0.123456789", format[i]) >= 0 {
			i++
		}
		if i >= len(format) {
			return nil, false
		}
		switch c := format[i]; {
		case c == '%':
		case strings.IndexByte("dboxXcU", c) >= 0:
			out = append(out, 'i')
		case strings.IndexByte("sqvT", c) >= 0:
			out = append(out, 's')
		case c == 't':
			out = append(out, 'b')
		case strings.IndexByte("eEfFgG", c) >= 0:
			out = append(out, 'f')
		default:
			return nil, false
		}
	}
	return out, true
}

// randInt is a uniform number in [0, n).
func randInt(n int) int {
	v, _ := rand.Int(rand.Reader, big.NewInt(int64(n)))
	return int(v.Int64())
}

func pick[T any](s []T) T { return s[randInt(len(s))] }

// name makes a test name in the package's style that nothing in the
// directory spells yet.
func (s *style) name() string {
	words := s.words
	if len(words) < 8 {
		words = append(append([]string(nil), words...), fallbackWords...)
	}
	for range 200 {
		var parts []string
		if len(s.names) > 0 {
			parts = strings.Split(pick(s.names)[len("Test"):], "_")
		}
		if len(parts) == 0 || parts[0] == "" {
			parts = []string{pick(words)}
		}
		i := randInt(len(parts))
		ws := splitCamel(parts[i])
		w := pick(words)
		if len(ws) > 0 && randInt(3) > 0 {
			ws[randInt(len(ws))] = w
		} else {
			ws = append(ws, w)
		}
		parts[i] = strings.Join(ws, "")
		n := "Test" + strings.Join(parts, "_")
		if testKind(n) == "T" && token.IsIdentifier(n) && !s.idents[n] {
			s.idents[n] = true
			return n
		}
	}
	return ""
}

// failure is a call that fails the test, in the form of one of the
// package's own (param is the test's parameter).
func (s *style) failure(param string) string {
	st := fallbackSite
	if len(s.sites) > 0 {
		st = pick(s.sites)
	}
	args := []string{st.literal}
	for _, k := range st.kinds {
		args = append(args, s.value(k))
	}
	return param + "." + st.method + "(" + strings.Join(args, ", ") + ")"
}

// value is a made-up argument of a kind verbKinds names.
func (s *style) value(kind byte) string {
	switch kind {
	case 'i':
		return strconv.Itoa(randInt(1000))
	case 'b':
		return strconv.FormatBool(randInt(2) == 1)
	case 'f':
		return strconv.Itoa(randInt(100)) + "." + strconv.Itoa(randInt(10)) + "5"
	}
	words := append(append([]string(nil), s.words...), fallbackWords...)
	return strconv.Quote(strings.ToLower(pick(words)))
}
