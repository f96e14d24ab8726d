package testgate

import (
	"go/ast"
	"go/types"
)

// The test binary's own file holds the seals' tokens in its compiled
// test functions (internal/gocanary), readable with debug/elf and
// debug/gosym in some fifty lines; the directory it runs from holds the
// harness's report of it. Code that reaches either from os.Args[0] is a
// tell, as os.Executable is.

// selfFiles open, inspect or locate a file by name: given os.Args[0]
// they reach the test binary (whose code holds the seals' tokens) or the
// directory it runs from (where the harness keeps its report).
// filepath.Base is left out: a program's name in its usage message.
var selfFiles = map[string]map[string]bool{
	"os":              {"Open": true, "OpenFile": true, "ReadFile": true, "Stat": true, "Lstat": true, "Readlink": true, "DirFS": true, "Chdir": true},
	"path/filepath":   {"Dir": true, "Join": true, "Abs": true, "EvalSymlinks": true, "Split": true},
	"path":            {"Dir": true, "Join": true, "Split": true},
	"debug/elf":       {"Open": true},
	"debug/buildinfo": {"ReadFile": true},
}

// executables are the packages that read an executable's code, symbols
// and line tables: with them a test binary finds the seals' tokens in
// its own compiled test functions.
var executables = map[string]bool{"debug/elf": true, "debug/gosym": true, "debug/dwarf": true, "debug/pe": true, "debug/macho": true, "debug/plan9obj": true}

// refersToArgv0: an expression that mentions os.Args[0], os.Args whole,
// or a variable holding one of them.
func (s *scanner) refersToArgv0(e ast.Expr) bool {
	found := false
	ast.Inspect(e, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.IndexExpr:
			if v, ok := s.intValue(n.Index); ok && v == 0 && (s.is(n.X, "os", "Args") || s.argv0[s.useOf(n.X)]) {
				found = true
			}
			return !found && !s.is(n.X, "os", "Args")
		case *ast.SliceExpr:
			return false // os.Args[1:] and the like: not the binary
		case *ast.SelectorExpr:
			found = found || s.argv0[s.info.Uses[n.Sel]] || s.is(n, "os", "Args") // whole: not under an index or slice
			return !found
		case *ast.Ident:
			found = found || s.argv0[s.info.Uses[n]]
		}
		return !found
	})
	return found
}

func (s *scanner) useOf(e ast.Expr) types.Object {
	switch e := ast.Unparen(e).(type) {
	case *ast.Ident:
		return s.info.Uses[e]
	case *ast.SelectorExpr:
		return s.info.Uses[e.Sel]
	}
	return nil
}
