package testgate

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/sandgate/sandgate/sandbox"
)

// Code that knows it runs inside a test binary can behave one way under
// test and another in use: forge the stream, exit early, deselect the
// failing test, or compute the right answer only when a caller's file
// ends in _test.go. The scan looks for the mechanical ways to know (see
// tells.go), in the change's non-test Go files only, and there only in
// top-level declarations the change added or altered: the base code was
// reviewed, and test files use the testing package by design. Each file
// is type-checked (go/types) with its package, so a name is resolved as
// the compiler resolves it (renamed and dot imports, shadowing, constants
// built from pieces). It recognises mechanisms, not intent: a determined
// forger can compute the same facts another way (see the README's
// limits), so this closes the cheap routes only.

// maxTellsPerFile bounds the lines one file contributes.
const maxTellsPerFile = 5

// detectsTestMode lists, one line each, the places in the change's added
// or modified non-test Go files that detect or steer the test binary.
// skipVendor leaves out vendor/ directories of module roots: their content
// is checked to be what go mod vendor makes (see modcheck.go), upstream
// code that may well inspect its stack.
func detectsTestMode(v *changeView, changes []sandbox.Change, skipVendor bool) []string {
	byDir := map[string][]string{}
	for _, c := range changes {
		if c.Deleted || c.Mode&os.ModeSymlink != 0 || !strings.HasSuffix(c.Path, ".go") || strings.HasSuffix(c.Path, "_test.go") || ignoredByGo(c.Path) {
			continue
		}
		if skipVendor && inModuleVendor(v, c.Path) {
			continue
		}
		byDir[path.Dir(c.Path)] = append(byDir[path.Dir(c.Path)], c.Path)
	}
	var out []string
	for _, d := range slices.Sorted(maps.Keys(byDir)) {
		sort.Strings(byDir[d])
		out = append(out, scanDir(v, d, byDir[d])...)
	}
	return out
}

// inModuleVendor reports whether p lies in a vendor directory directly
// below a module root (a go.mod, or the root's go.work).
func inModuleVendor(v *changeView, p string) bool {
	parts := strings.Split(p, "/")
	for i, el := range parts[:len(parts)-1] {
		if el != "vendor" {
			continue
		}
		root := strings.Join(parts[:i], "/")
		if _, err := v.read(path.Join(root, "go.mod")); err == nil {
			return true
		}
		if _, err := v.read("go.work"); err == nil && root == "" {
			return true
		}
	}
	return false
}

// scanDir type-checks the package in dir (its non-test files as the
// change leaves them) and scans the changed files among them.
func scanDir(v *changeView, dir string, changed []string) []string {
	fset := token.NewFileSet()
	var out []string
	files := map[string]*ast.File{}
	texts := map[string][]byte{}
	var pkgName string
	for _, p := range changed {
		f, data, err := parseView(v, fset, p)
		if err != nil {
			out = append(out, fmt.Sprintf("%s: cannot be checked for test-mode detection: %v", p, err))
			continue
		}
		files[p], texts[p] = f, data
		pkgName = f.Name.Name
	}
	if len(files) == 0 {
		return out
	}
	all := make([]*ast.File, 0, len(files))
	for _, name := range v.files(dir) {
		p := path.Join(dir, name)
		if f, ok := files[p]; ok {
			all = append(all, f)
			continue
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		if f, _, err := parseView(v, fset, p); err == nil && f.Name.Name == pkgName {
			all = append(all, f)
		}
	}
	info := typeCheck(fset, dir, all)
	for _, p := range changed {
		f, ok := files[p]
		if !ok {
			continue
		}
		hits := newBaseFilter(v, p).keep(fset, f, texts[p], scanTells(f, info))
		for i, h := range hits {
			if i == maxTellsPerFile {
				out = append(out, fmt.Sprintf("%s: … and %d more places that detect the test binary", p, len(hits)-maxTellsPerFile))
				break
			}
			out = append(out, fmt.Sprintf("%s:%d: production code detects the test binary (%s): behaviour under test could differ from behaviour in use; set allow_test_detection: true on the test node if this is intended",
				p, fset.Position(h.pos).Line, h.what))
		}
	}
	return out
}

func parseView(v *changeView, fset *token.FileSet, p string) (*ast.File, []byte, error) {
	data, err := v.read(p)
	if err != nil {
		return nil, nil, err
	}
	f, err := parser.ParseFile(fset, p, data, parser.ParseComments|parser.SkipObjectResolution)
	return f, data, err
}

// typeCheck checks a package's files with every import an empty package:
// what the scan needs is how each name resolves (to which import, local
// variable or constant) and the value of constant expressions, not the
// imports' declarations, and the host need not hold the module's
// dependencies. Errors (undeclared names of the imports) are expected.
func typeCheck(fset *token.FileSet, dir string, files []*ast.File) *types.Info {
	info := &types.Info{
		Types: map[ast.Expr]types.TypeAndValue{},
		Defs:  map[*ast.Ident]types.Object{},
		Uses:  map[*ast.Ident]types.Object{},
	}
	conf := types.Config{Importer: emptyImporter{}, Error: func(error) {}, FakeImportC: true}
	_, _ = conf.Check(dir, fset, files, info)
	return info
}

// emptyImporter gives every import path an empty, complete package named
// after its last element (unsafe is the real one).
type emptyImporter struct{}

func (emptyImporter) Import(p string) (*types.Package, error) {
	if p == "unsafe" {
		return types.Unsafe, nil
	}
	name := path.Base(p)
	if i := strings.IndexAny(name, ".-"); i > 0 && strings.HasPrefix(name[i:], ".v") {
		name = name[:i] // gopkg.in/yaml.v3
	}
	pkg := types.NewPackage(p, name)
	pkg.MarkComplete()
	return pkg, nil
}

// baseFilter keeps the tells in top-level declarations the change added
// or altered: a declaration whose source text the base file holds word
// for word was reviewed before this run.
type baseFilter struct{ decls, comments map[string]bool }

func newBaseFilter(v *changeView, p string) baseFilter {
	b := baseFilter{decls: map[string]bool{}, comments: map[string]bool{}}
	data, err := readCapped(filepath.Join(v.snap, filepath.FromSlash(p)))
	if err != nil {
		return b
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, p, data, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		return b
	}
	for _, d := range f.Decls {
		b.decls[string(source(fset, data, d))] = true
	}
	for _, g := range f.Comments {
		for _, c := range g.List {
			b.comments[c.Text] = true
		}
	}
	return b
}

func (b baseFilter) keep(fset *token.FileSet, f *ast.File, data []byte, hits []tell) []tell {
	if len(b.decls) == 0 && len(b.comments) == 0 {
		return hits
	}
	var out []tell
	for _, h := range hits {
		if h.comment != "" {
			if !b.comments[h.comment] {
				out = append(out, h)
			}
			continue
		}
		d := enclosingDecl(f, h.pos)
		if d == nil || !b.decls[string(source(fset, data, d))] {
			out = append(out, h)
		}
	}
	return out
}

// enclosingDecl is the top-level declaration holding pos.
func enclosingDecl(f *ast.File, pos token.Pos) ast.Decl {
	for _, d := range f.Decls {
		if d.Pos() <= pos && pos < d.End() {
			return d
		}
	}
	return nil
}

// source is a node's text in the file data.
func source(fset *token.FileSet, data []byte, n ast.Node) []byte {
	start, end := fset.Position(n.Pos()).Offset, fset.Position(n.End()).Offset
	if start < 0 || end > len(data) || start > end {
		return nil
	}
	return bytes.TrimSpace(data[start:end])
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
