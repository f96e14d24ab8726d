package gocanary

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/build"
	"go/build/constraint"
	"go/parser"
	"go/token"
	"io"
	"path"
	goruntime "runtime"
	"sort"
	"strings"

	"github.com/sandgate/sandgate/sandbox"
)

// Options say which packages a plan seals and which canaries it adds.
type Options struct {
	// Changed are the paths the change touched (relative to the module
	// root); the packages they reach get canaries (see Affected).
	Changed []string
	// All gives every package canaries, changed or not.
	All bool
	// Only, when set, names exactly the directories that get canaries
	// (the packages a grader runs), whatever the change reaches.
	Only []string
	// Hide are paths (held-out tests) removed from the box once the
	// binaries are built, so that no test binary can read them.
	Hide []string
	// Failing adds the failing canary: off when a failure stops the run
	// (-failfast) or when the command selects tests by name and the
	// canary would not run.
	Failing bool
	// Passing adds the passing canary: off when the command selects
	// tests by name (unless the caller adds Names to the selection).
	Passing bool
	// Command is the go test command the plan will run (as Run takes it):
	// when set, only the reached packages its package arguments can name
	// get seals and canaries (see patterns.go).
	Command []string
	// Root is the module root inside the box (default sandbox.WorkDir).
	Root string
	// ExecPath is where the collector goes (default ExecPath).
	ExecPath string
	// TmpDir holds each round's working directory in the box (default
	// sandbox.TmpDir); a round removes its own before it ends.
	TmpDir string
}

// Plan is one run's canaries: what goes into the overlay and what the
// report must then show. Build one per test run; its secrets must never
// be reused.
type Plan struct {
	root       string
	execPath   string
	tmpDir     string
	pkgs       map[string]*pkgPlan // by directory
	unaffected []string            // directories whose binaries run at once
	// unsealed are reached directories the command was read not to test
	// (see patterns.go); stray are the import paths of those that ran.
	unsealed map[string]bool
	stray    []string
	// changed are the import paths of unreached packages whose kept
	// binary or its files changed before the last run (see last.go).
	changed []string
	// t2j is the copy of test2json the first phase kept beside the
	// binaries for the last run, and its digest (see phaseOne, last).
	t2j     struct{ path, hash string }
	overlay map[string][]byte // path → sealed source
	hide    []string
	nonce   string
	reserve int64 // bytes the collector leaves free (diskReserve)
	// listed are the tests each stashed binary holds, by import path
	// and name; unlisted the packages whose list could not be read.
	listed   map[string]map[string]bool
	unlisted []string
	sel      selection // the tests the command runs
}

// pkgPlan is one package directory's secrets.
type pkgPlan struct {
	dir              string
	importPath       string // as go test reported it (set by Run)
	failing, passing string // canary names, "" when left out
	passToken        string
	seals            map[string][]tokens // test name → its seals (one per test package)
}

// NewPlan reads the tree and writes the canaries of every package the
// change reaches. A directory whose test files declare no test gets none
// (a canary would be its only test).
func NewPlan(t Tree, o Options) *Plan {
	p := &Plan{root: o.Root, pkgs: map[string]*pkgPlan{}, unsealed: map[string]bool{}, overlay: map[string][]byte{}, hide: o.Hide, nonce: randomHex(16), execPath: o.ExecPath, reserve: diskReserve}
	if p.root == "" {
		p.root = sandbox.WorkDir
	}
	if p.tmpDir = o.TmpDir; p.tmpDir == "" {
		p.tmpDir = sandbox.TmpDir
	}
	if p.execPath == "" {
		p.execPath = ExecPath
	}
	g := readGraph(t)
	var reach map[string]bool
	switch {
	case o.Only != nil:
		reach = map[string]bool{}
		for _, d := range o.Only {
			reach[path.Clean(d)] = true
		}
	case o.All:
		reach = g.allDirs()
	default:
		reach, _ = g.affected(o.Changed)
	}
	if _, ok := forPackages(o.Command, nil); o.Command != nil && !ok {
		// The packages the change cannot reach could only run in the
		// second phase, beside the change's code, which could rewrite
		// their reports: seal them all.
		reach = g.allDirs()
	}
	tested := commandDirs(g, p.root, o.Command)
	for _, d := range t.Dirs() {
		if len(testFiles(t, d)) == 0 {
			continue
		}
		switch {
		case !reach[d]:
			p.unaffected = append(p.unaffected, d)
		case tested != nil && !tested(d):
			p.unsealed[d] = true
		default:
			p.pkgs[d] = p.planDir(t, d, o)
		}
	}
	sort.Strings(p.unaffected)
	return p
}

// Names are the standalone canaries' names, to add to a -run selection
// the harness makes itself (a re-run of failed tests).
func (p *Plan) Names() []string {
	if p == nil {
		return nil
	}
	var out []string
	for _, pp := range p.pkgs {
		for _, n := range []string{pp.failing, pp.passing} {
			if n != "" {
				out = append(out, n)
			}
		}
	}
	sort.Strings(out)
	return out
}

// ImportPath is the import path go test reported for a canaried
// directory ("" before Run, or when its binary never ran).
func (p *Plan) ImportPath(dir string) string {
	if pp := p.pkgs[path.Clean(dir)]; pp != nil {
		return pp.importPath
	}
	return ""
}

// Packages are the directories that got canaries.
func (p *Plan) Packages() []string {
	out := make([]string, 0, len(p.pkgs))
	for d := range p.pkgs {
		out = append(out, d)
	}
	sort.Strings(out)
	return out
}

// source is one test file as the plan reads it.
type source struct {
	name   string
	src    []byte
	file   *ast.File
	fset   *token.FileSet
	sealed []byte
}

func (p *Plan) planDir(t Tree, dir string, o Options) *pkgPlan {
	pp := &pkgPlan{dir: dir, seals: map[string][]tokens{}}
	st := &style{idents: map[string]bool{}}
	var files []*source
	for _, f := range goFiles(t, dir) {
		src, err := t.ReadFile(join(dir, f))
		if err != nil {
			continue
		}
		if !strings.HasSuffix(f, "_test.go") {
			for id := range identifiers(src) {
				st.idents[id] = true
			}
			continue
		}
		fset := token.NewFileSet()
		file, err := parser.ParseFile(fset, f, src, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			continue // the package does not build: it fails on its own
		}
		st.learn(file, src)
		sealed, toks := sealFile(fset, file, src)
		for n, tk := range toks {
			pp.seals[n] = append(pp.seals[n], tk)
		}
		files = append(files, &source{name: f, src: src, file: file, fset: fset, sealed: sealed})
	}
	if len(st.names) > 0 && (o.Failing || o.Passing) {
		if host := pickHost(files); host != nil {
			p.addCanaries(pp, st, host, o)
		}
	}
	for _, s := range files {
		if !bytes.Equal(s.sealed, s.src) {
			p.overlay[join(dir, s.name)] = s.sealed
		}
	}
	return pp
}

// addCanaries writes the standalone canaries into host's sealed source.
func (p *Plan) addCanaries(pp *pkgPlan, st *style, host *source, o Options) {
	tn := testingName(host.file)
	typ := tn + ".T"
	if tn == "." {
		typ = "T"
	}
	var funcs []string
	if o.Failing {
		if pp.failing = st.name(); pp.failing != "" {
			a := randInt(90) + 2
			b := a + 1 + randInt(3)
			funcs = append(funcs, fmt.Sprintf("func %s(t *%s) { if got, want := %d, %d; got != want { %s } }", pp.failing, typ, a, b, st.failure("t")))
		}
	}
	if o.Passing {
		if pp.passing = st.name(); pp.passing != "" {
			tok, skip := newToken(), newToken()
			pp.passToken = tok.String()
			a := randInt(90) + 2
			funcs = append(funcs, fmt.Sprintf("func %s(t *%s) { t.Cleanup(func() { if !t.Failed() { if t.Skipped() { t.Logf(\"%%d %%d\", %s) } else { t.Logf(\"%%d %%d\", %s) } } }); if got, want := %d, %d; got != want { %s } }",
				pp.passing, typ, skip.args(), tok.args(), a, a, st.failure("t")))
		}
	}
	host.sealed = place(host, funcs)
}

// pickHost chooses a test file for the canaries: one go test compiles on
// linux whatever the build tags (no constraint line, no other OS or
// architecture in its name) and that imports testing.
func pickHost(files []*source) *source {
	var ok []*source
	ctx := build.Default
	ctx.GOOS, ctx.GOARCH = "linux", goruntime.GOARCH
	for _, s := range files {
		ctx.OpenFile = func(string) (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(s.src)), nil }
		if match, err := ctx.MatchFile(".", s.name); err != nil || !match || HasBuildLine(s.file) {
			continue
		}
		if tn := testingName(s.file); tn != "" && len(testFuncs(s.file)) > 0 {
			ok = append(ok, s)
		}
	}
	if len(ok) == 0 {
		return nil
	}
	return pick(ok)
}

// HasBuildLine reports whether f has a build constraint line before its
// package clause: //go:build, or // +build, which the go command still
// obeys in a file without //go:build. Whether such a file is compiled
// depends on the build tags, so callers that cannot know the tags
// (a canary's host file must be compiled whatever they are; a command
// with -tags may leave any constrained file out) treat both alike. An
// old-style line not followed by a blank line is no constraint, but
// counting it errs the safe way for both.
func HasBuildLine(f *ast.File) bool {
	for _, g := range f.Comments {
		if g.Pos() > f.Package {
			break
		}
		for _, c := range g.List {
			if constraint.IsGoBuild(c.Text) || constraint.IsPlusBuild(c.Text) {
				return true
			}
		}
	}
	return false
}

// place puts each function on a blank line between the file's top-level
// declarations, chosen at random, so that no line of the file moves; with
// too few blank lines the rest go at the end.
func place(s *source, funcs []string) []byte {
	lines := strings.SplitAfter(string(s.sealed), "\n")
	free := blankLines(s)
	for _, fn := range funcs {
		if len(free) == 0 {
			if !strings.HasSuffix(lines[len(lines)-1], "\n") && lines[len(lines)-1] != "" {
				lines[len(lines)-1] += "\n"
			}
			lines = append(lines, fn+"\n")
			continue
		}
		i := randInt(len(free))
		n := free[i]
		free = append(free[:i], free[i+1:]...)
		lines[n] = fn + "\n"
	}
	return []byte(strings.Join(lines, ""))
}

// blankLines are the 0-based numbers of the empty lines outside every
// declaration and comment.
func blankLines(s *source) []int {
	tf := s.fset.File(s.file.Pos())
	busy := make([]bool, tf.LineCount()+2)
	mark := func(from, to token.Pos) {
		for l := tf.Line(from); l <= tf.Line(to) && l < len(busy); l++ {
			busy[l] = true
		}
	}
	mark(s.file.Package, s.file.Name.End())
	for _, d := range s.file.Decls {
		mark(d.Pos(), d.End())
	}
	for _, g := range s.file.Comments {
		mark(g.Pos(), g.End())
	}
	// Declarations may not come before the imports.
	after := tf.Line(s.file.Name.End())
	for _, d := range s.file.Decls {
		if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.IMPORT {
			after = tf.Line(g.End())
		}
	}
	var out []int
	lines := strings.SplitAfter(string(s.src), "\n")
	for i, l := range lines {
		if !busy[i+1] && strings.TrimSpace(l) == "" && strings.HasSuffix(l, "\n") && i+1 > after {
			out = append(out, i)
		}
	}
	return out
}
