package gocanary

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"go/ast"
	"go/parser"
	"go/scanner"
	"go/token"
	"slices"
	"strconv"
	"unicode"
	"unicode/utf8"
)

// A seal is one statement put at the start of a test function's body, on
// the line of its opening brace (no line moves, so positions in failure
// messages, panics and the binary's line table stay those of the file on
// disk):
//
//	t.Cleanup(func() { if !t.Failed() { if t.Skipped() { t.Logf("%d %d", SKIP) } else { t.Logf("%d %d", PASS) } } });
//
// The cleanup runs last, after the test's own cleanups and subtests, so
// it logs the pass token only for a test that passed and the skip token
// only for one that was skipped. Tokens are two random 62-bit numbers per
// test, compiled in as constants; the report must show each pass and skip
// with its own token, which code that forges the report does not have.

// tokens are one test function's secrets, as the log line shows them.
type tokens struct{ pass, skip string }

// testFunc is a test function go test runs: TestXxx(*testing.T) or
// FuzzXxx(*testing.F), no receiver, no results.
type testFunc struct {
	decl  *ast.FuncDecl
	param string // the parameter's name, "" or "_" when it has none
}

// testingName is the file's local name for the testing package: "" when
// it does not import it, "." for a dot import.
func testingName(f *ast.File) string {
	for _, s := range f.Imports {
		if p, _ := strconv.Unquote(s.Path.Value); p == "testing" {
			if s.Name == nil {
				return "testing"
			}
			if s.Name.Name != "_" {
				return s.Name.Name
			}
		}
	}
	return ""
}

// testFuncs lists the file's test and fuzz functions.
func testFuncs(f *ast.File) []testFunc {
	tn := testingName(f)
	if tn == "" {
		return nil
	}
	var out []testFunc
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Recv != nil || fd.Body == nil || fd.Type.TypeParams != nil || fd.Type.Results.NumFields() > 0 {
			continue
		}
		kind := testKind(fd.Name.Name)
		if kind == "" || len(fd.Type.Params.List) != 1 || len(fd.Type.Params.List[0].Names) > 1 {
			continue
		}
		field := fd.Type.Params.List[0]
		if !isTestingPtr(field.Type, tn, kind) {
			continue
		}
		tf := testFunc{decl: fd}
		if len(field.Names) == 1 {
			tf.param = field.Names[0].Name
		}
		out = append(out, tf)
	}
	return out
}

// testKind is "T" for a test name, "F" for a fuzz target's, "" otherwise.
func testKind(name string) string {
	for prefix, kind := range map[string]string{"Test": "T", "Fuzz": "F"} {
		rest, ok := cutPrefix(name, prefix)
		if !ok {
			continue
		}
		if r, _ := utf8.DecodeRuneInString(rest); rest == "" || !unicode.IsLower(r) {
			if name != "TestMain" {
				return kind
			}
		}
	}
	return ""
}

func cutPrefix(s, p string) (string, bool) {
	if len(s) >= len(p) && s[:len(p)] == p {
		return s[len(p):], true
	}
	return s, false
}

func isTestingPtr(e ast.Expr, tn, kind string) bool {
	star, ok := e.(*ast.StarExpr)
	if !ok {
		return false
	}
	switch x := star.X.(type) {
	case *ast.SelectorExpr:
		id, ok := x.X.(*ast.Ident)
		return ok && tn != "." && id.Name == tn && x.Sel.Name == kind
	case *ast.Ident:
		return tn == "." && x.Name == kind
	}
	return false
}

// edit replaces src[at:at+del] with text.
type edit struct {
	at, del int
	text    string
}

func apply(src []byte, edits []edit) []byte {
	slices.SortFunc(edits, func(a, b edit) int { return b.at - a.at })
	out := slices.Clone(src)
	for _, e := range edits {
		out = slices.Concat(out[:e.at], []byte(e.text), out[e.at+e.del:])
	}
	return out
}

// seal returns src with every test function sealed, and each sealed
// function's tokens; ok is false when src does not parse.
func seal(name string, src []byte) ([]byte, map[string]tokens, bool) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, src, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		return nil, nil, false
	}
	out, toks := sealFile(fset, f, src)
	return out, toks, true
}

// sealFile is seal over src parsed as f.
func sealFile(fset *token.FileSet, f *ast.File, src []byte) ([]byte, map[string]tokens) {
	tf := fset.File(f.Pos())
	idents := identifiers(src)
	var edits []edit
	toks := map[string]tokens{}
	for _, fn := range testFuncs(f) {
		p := fn.param
		if p == "" || p == "_" {
			p = freshName(idents, "tb")
			field := fn.decl.Type.Params.List[0]
			if fn.param == "" {
				edits = append(edits, edit{at: tf.Offset(field.Type.Pos()), text: p + " "})
			} else {
				edits = append(edits, edit{at: tf.Offset(field.Names[0].Pos()), del: 1, text: p})
			}
		}
		pass, skip := newToken(), newToken()
		toks[fn.decl.Name.Name] = tokens{pass: pass.String(), skip: skip.String()}
		stmt := fmt.Sprintf("%[1]s.Cleanup(func() { if !%[1]s.Failed() { if %[1]s.Skipped() { %[1]s.Logf(\"%%d %%d\", %[2]s) } else { %[1]s.Logf(\"%%d %%d\", %[3]s) } } }); ",
			p, skip.args(), pass.args())
		edits = append(edits, edit{at: tf.Offset(fn.decl.Body.Lbrace) + 1, text: stmt})
	}
	return apply(src, edits), toks
}

// secret is a token two numbers wide, below 2^62 each so that int64
// holds them on every architecture.
type secret [2]uint64

func newToken() secret {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read does not fail on Linux
	return secret{binary.LittleEndian.Uint64(b[:8]) >> 2, binary.LittleEndian.Uint64(b[8:]) >> 2}
}

// randomHex is n random bytes in hex.
func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func (t secret) String() string { return fmt.Sprintf("%d %d", t[0], t[1]) }
func (t secret) args() string   { return fmt.Sprintf("int64(%d), int64(%d)", t[0], t[1]) }

// identifiers is every identifier spelled in src.
func identifiers(src []byte) map[string]bool {
	out := map[string]bool{}
	var s scanner.Scanner
	fset := token.NewFileSet()
	s.Init(fset.AddFile("", -1, len(src)), src, nil, 0)
	for {
		_, tok, lit := s.Scan()
		if tok == token.EOF {
			return out
		}
		if tok == token.IDENT {
			out[lit] = true
		}
	}
}

// freshName is base, or base with a number, not spelled in the file.
func freshName(idents map[string]bool, base string) string {
	n := base
	for i := 1; idents[n]; i++ {
		n = base + strconv.Itoa(i)
	}
	idents[n] = true
	return n
}
