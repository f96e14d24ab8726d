package testgate

import (
	"fmt"
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"io"
	"path"
	"path/filepath"
	"regexp"
	goruntime "runtime"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/sandgate/sandgate/internal/gocanary"
	"github.com/sandgate/sandgate/nodes/testreport"
	"github.com/sandgate/sandgate/sandbox"
)

// The checks in this file judge the test run by what the harness reads
// itself, the base snapshot plus the change, never by what the test
// binary (which runs the change's code) printed about itself.

// moduleBoundaries fails a change that decides which packages go test
// ./... visits: a go.mod or go.work added below the root makes the
// packages beneath it a module of their own, which ./... skips; a root
// go.work or new ignore directives in the root go.mod do the same.
func moduleBoundaries(v *changeView, changes []sandbox.Change) []string {
	var out []string
	for _, c := range changes {
		name := path.Base(c.Path)
		if name != "go.mod" && name != "go.work" {
			continue
		}
		atRoot := path.Dir(c.Path) == "."
		switch {
		case atRoot && name == "go.work":
			out = append(out, "the change adds, changes or deletes go.work: a workspace file decides which modules go test ./... visits, and the tests judged must be the base's")
		case atRoot:
			if added := newIgnores(v, c); len(added) > 0 {
				out = append(out, fmt.Sprintf("the change adds ignore directives to go.mod (%s): packages there are no longer tested by go test ./...", strings.Join(added, ", ")))
			}
		case !c.Deleted && !v.inBase(c.Path):
			out = append(out, fmt.Sprintf("the change adds a module boundary (%s): packages below it are no longer tested by go test ./...", c.Path))
		}
	}
	return out
}

// newIgnores lists the root go.mod's ignore entries (Go 1.25) the base
// did not have.
func newIgnores(v *changeView, c sandbox.Change) []string {
	if c.Deleted {
		return nil
	}
	data, err := v.read(c.Path)
	if err != nil {
		return []string{fmt.Sprintf("go.mod unreadable: %v", err)}
	}
	var old []string
	if base, err := readCapped(filepath.Join(v.snap, "go.mod")); err == nil {
		old = modIgnores(base)
	}
	var out []string
	for _, ig := range modIgnores(data) {
		if !slices.Contains(old, ig) {
			out = append(out, ig)
		}
	}
	return out
}

// modIgnores reads the ignore directives of a go.mod, single or in a
// block; a line scan is enough, as go.mod's grammar is line based.
func modIgnores(data []byte) []string {
	var out []string
	block := false
	for line := range strings.Lines(string(data)) {
		line, _, _ = strings.Cut(line, "//")
		f := strings.Fields(line)
		switch {
		case len(f) == 0:
		case block && f[0] == ")":
			block = false
		case block:
			out = append(out, f[0])
		case f[0] == "ignore" && len(f) > 1 && f[1] == "(":
			block = true
		case f[0] == "ignore" && len(f) > 1:
			out = append(out, f[1])
		case strings.HasPrefix(f[0], "ignore("):
			block = true
		}
	}
	return out
}

// moduleOf reads the module path from the view's root go.mod.
func moduleOf(v *changeView) string { return modulePath(v, "go.mod") }

// modulePath reads the module path of the go.mod at rel.
func modulePath(v *changeView, rel string) string { return gocanary.ModulePath(viewTree{v}, rel) }

// selectsTests matches a command line that chooses tests by name; then
// not every declared test is expected to run.
var selectsTests = regexp.MustCompile(`(^|\s)--?(test\.)?(run|skip)(\s|=|$)`)

// buildTags matches a command line that sets build tags, which change
// which constrained files are compiled.
var buildTags = regexp.MustCompile(`(^|\s)--?tags(\s|=|$)`)

// declaredTests fails every top-level Test function that the view's test
// files declare for a package in the report but that has no result in
// the stream: deselected (an init appending -test.skip), or never run.
// Only packages that passed or were skipped are checked: a failing one
// already fails the gate.
func declaredTests(v *changeView, rep *testreport.Report, cmd string) []string {
	mod := moduleOf(v)
	if mod == "" || selectsTests.MatchString(cmd) {
		return nil // -run/-skip in the blueprint's own command: a subset is intended
	}
	tags := buildTags.MatchString(cmd)
	var out []string
	for _, p := range rep.Packages {
		if p.Result != "pass" && p.Result != "skip" {
			continue
		}
		dir, ok := packageDir(mod, p.Path)
		if !ok {
			continue // outside the root module: not the harness's to map
		}
		names, probs := testsInDir(v, dir, tags)
		out = append(out, probs...)
		for _, n := range names {
			if !rep.RanTop(testreport.Key(p.Path, n)) {
				out = append(out, fmt.Sprintf("%s was declared but never ran (package %s): a test with no result is not a pass", n, p.Path))
			}
		}
	}
	return out
}

func packageDir(mod, pkg string) (string, bool) {
	if pkg == mod {
		return ".", true
	}
	rel, ok := strings.CutPrefix(pkg, mod+"/")
	return rel, ok && rel != ""
}

// testsInDir lists the top-level tests declared in a directory's test
// files that go test would compile on linux for this machine's
// architecture (file-name suffixes and //go:build lines, evaluated with
// cgo on and off: a file counts only if both include it). When the
// command sets -tags, files with a build line (//go:build or // +build)
// are not counted: the tags may leave them out.
func testsInDir(v *changeView, dir string, tags bool) ([]string, []string) {
	ctx := viewContext(v)
	var names, probs []string
	for _, f := range v.files(dir) {
		if !strings.HasSuffix(f, "_test.go") || !compiled(ctx, dir, f) {
			continue
		}
		rel := path.Join(dir, f)
		data, err := v.read(rel)
		if err != nil {
			probs = append(probs, fmt.Sprintf("%s: cannot be read to list its tests: %v", rel, err))
			continue
		}
		file, err := parser.ParseFile(token.NewFileSet(), rel, data, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			probs = append(probs, fmt.Sprintf("%s: cannot be parsed to list its tests: %v", rel, err))
			continue
		}
		if tags && gocanary.HasBuildLine(file) {
			continue
		}
		names = append(names, testFuncs(file)...)
	}
	return names, probs
}

// viewContext is a build context for linux on this machine's
// architecture that reads files through the view.
func viewContext(v *changeView) build.Context {
	ctx := build.Default
	ctx.GOOS, ctx.GOARCH = "linux", goruntime.GOARCH
	ctx.JoinPath = path.Join
	ctx.OpenFile = func(p string) (io.ReadCloser, error) {
		b, err := v.read(p)
		if err != nil {
			return nil, err
		}
		return io.NopCloser(strings.NewReader(string(b))), nil
	}
	return ctx
}

func compiled(ctx build.Context, dir, name string) bool {
	for _, cgo := range []bool{false, true} {
		ctx.CgoEnabled = cgo
		if ok, err := ctx.MatchFile(dir, name); err != nil || !ok {
			return false
		}
	}
	return true
}

// testFuncs are the functions go test runs as top-level tests: TestXxx
// without a receiver, where Xxx does not start with a lower-case letter.
// Any such function with the wrong signature stops go test from building.
func testFuncs(f *ast.File) []string {
	var out []string
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Recv != nil || fd.Name.Name == "TestMain" {
			continue
		}
		rest, ok := strings.CutPrefix(fd.Name.Name, "Test")
		if r, _ := utf8.DecodeRuneInString(rest); ok && (rest == "" || !unicode.IsLower(r)) {
			out = append(out, fd.Name.Name)
		}
	}
	return out
}
