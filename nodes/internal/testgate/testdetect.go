package testgate

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path"
	"regexp"
	"strconv"
	"strings"

	"github.com/sandgate/sandgate/sandbox"
)

// Code that knows it runs inside a test binary can behave one way under
// test and another in use: forge the stream, exit early, or deselect the
// failing test. The scan looks for the mechanical ways to know, in the
// change's non-test Go files only; the base code was reviewed, and test
// files use the testing package by design. It recognises names, not
// intent: a determined forger can compute the same facts another way (see
// the README's limits), so this closes the cheap routes only.

// testFlag matches a string that names one of the testing package's
// flags ("test.v", "-test.skip=^TestAdd$") or their common prefix
// ("test.", for code that walks flag.CommandLine).
var testFlag = regexp.MustCompile(`^-{0,2}test\.((artifacts|bench|benchmem|benchtime|blockprofile|blockprofilerate|count|coverprofile|cpu|cpuprofile|failfast|fullpath|fuzz|fuzzcachedir|fuzzminimizetime|fuzztime|fuzzworker|gocoverdir|list|memprofile|memprofilerate|mutexprofile|mutexprofilefraction|outputdir|paniconexit0|parallel|run|short|shuffle|skip|testlogfile|timeout|trace|v)(=.*)?)?$`)

// testingHooks are the testing package's functions that tell code it
// runs under test, or (Init) register the test flags early so package
// code can set them before the tests are selected.
var testingHooks = map[string]bool{"Testing": true, "Init": true}

// detectsTestMode lists the change's added or modified non-test Go files
// that detect or steer the test binary, one line each.
func detectsTestMode(v *changeView, changes []sandbox.Change) []string {
	var out []string
	for _, c := range changes {
		if c.Deleted || c.Mode&os.ModeSymlink != 0 || !strings.HasSuffix(c.Path, ".go") || strings.HasSuffix(c.Path, "_test.go") || ignoredByGo(c.Path) {
			continue
		}
		data, err := v.read(c.Path)
		if err != nil {
			out = append(out, fmt.Sprintf("%s: cannot be read to check it for test-mode detection: %v", c.Path, err))
			continue
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, c.Path, data, parser.SkipObjectResolution)
		if err != nil {
			out = append(out, fmt.Sprintf("%s: cannot be parsed to check it for test-mode detection: %v", c.Path, err))
			continue
		}
		if pos, what := findTestDetection(f); what != "" {
			out = append(out, fmt.Sprintf("%s:%d: production code detects the test binary (%s): behaviour under test would differ from behaviour in use; set allow_test_detection: true on the test node if this is intended",
				c.Path, fset.Position(pos).Line, what))
		}
	}
	return out
}

// ignoredByGo: go build never compiles files in testdata or in
// directories starting with . or _, nor files starting with them.
func ignoredByGo(p string) bool {
	for _, el := range strings.Split(p, "/") {
		if el == "testdata" || strings.HasPrefix(el, ".") || strings.HasPrefix(el, "_") {
			return true
		}
	}
	return false
}

// importNames maps the local names of the testing and os imports ("."
// for a dot import).
func importNames(f *ast.File) (testing, osName string) {
	for _, im := range f.Imports {
		p, _ := strconv.Unquote(im.Path.Value)
		name := path.Base(p)
		if im.Name != nil {
			name = im.Name.Name
		}
		switch p {
		case "testing":
			testing = name
		case "os":
			osName = name
		}
	}
	return testing, osName
}

// findTestDetection returns the first recognised detection in f.
func findTestDetection(f *ast.File) (token.Pos, string) {
	testingName, osName := importNames(f)
	isArgs := func(e ast.Expr) bool { return refersToOsArgs(e, osName) }
	var pos token.Pos
	var what string
	ast.Inspect(f, func(n ast.Node) bool {
		if what != "" {
			return false
		}
		switch n := n.(type) {
		case *ast.SelectorExpr:
			if id, ok := n.X.(*ast.Ident); ok && testingName != "" && id.Name == testingName && testingHooks[n.Sel.Name] {
				pos, what = n.Pos(), "testing."+n.Sel.Name
			}
		case *ast.Ident:
			if testingName == "." && testingHooks[n.Name] {
				pos, what = n.Pos(), "testing."+n.Name
			}
		case *ast.BasicLit:
			pos, what = n.Pos(), testString(n)
		case *ast.AssignStmt:
			for _, l := range n.Lhs {
				if isArgs(l) {
					pos, what = n.Pos(), "assignment to os.Args"
				}
			}
		case *ast.UnaryExpr:
			if n.Op == token.AND && isArgs(n.X) {
				pos, what = n.Pos(), "address of os.Args"
			}
		case *ast.CallExpr:
			if id, ok := n.Fun.(*ast.Ident); ok && (id.Name == "copy" || id.Name == "append") && len(n.Args) > 0 && writesArgs(id.Name, n.Args[0], osName) {
				pos, what = n.Pos(), id.Name+" into os.Args"
			}
		}
		return what == ""
	})
	return pos, what
}

// testString names a string literal that is a test flag or the test
// binary's name suffix.
func testString(l *ast.BasicLit) string {
	if l.Kind != token.STRING {
		return ""
	}
	s, err := strconv.Unquote(l.Value)
	if err != nil {
		return ""
	}
	switch {
	case testFlag.MatchString(s):
		return fmt.Sprintf("the test flag %q", s)
	case strings.HasSuffix(s, ".test") || strings.HasSuffix(s, ".test.exe"):
		return fmt.Sprintf("the test binary's name suffix %q", s)
	}
	return ""
}

// refersToOsArgs: os.Args, or an element or slice of it.
func refersToOsArgs(e ast.Expr, osName string) bool {
	for {
		switch x := e.(type) {
		case *ast.ParenExpr:
			e = x.X
		case *ast.IndexExpr:
			e = x.X
		case *ast.SliceExpr:
			e = x.X
		case *ast.SelectorExpr:
			id, ok := x.X.(*ast.Ident)
			return ok && osName != "" && id.Name == osName && x.Sel.Name == "Args"
		case *ast.Ident:
			return osName == "." && x.Name == "Args"
		default:
			return false
		}
	}
}

// writesArgs: copy(os.Args…, …) and append(os.Args[:i], …) write into
// os.Args' array; append(os.Args, …) writes only past its length.
func writesArgs(fn string, e ast.Expr, osName string) bool {
	if fn == "copy" {
		return refersToOsArgs(e, osName)
	}
	s, ok := e.(*ast.SliceExpr)
	return ok && refersToOsArgs(s.X, osName)
}
