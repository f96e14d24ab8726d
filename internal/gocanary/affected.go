package gocanary

import (
	"go/parser"
	"go/token"
	"path"
	"strconv"
	"strings"
)

// Which packages need a canary: a test binary can forge its report only
// with code of the change in it, so packages the change cannot reach keep
// plain go test, and with it go test's result cache (a canary drawn fresh
// makes every binary new, so a canaried package never hits the cache). The
// reach is over-approximated: every import of every .go file counts,
// whatever its build constraints, and so does a changed file of any kind
// (embedded files, assembly, a script a test runs) in a package's
// directory or below it. A package whose build can read files outside
// its directory (cgo, C or assembly sources: an #include may name any
// path) or that imports a path of a module of the tree that names no
// package directory of it (a symlinked directory, which the tree does
// not follow) is reached by every change, as one whose tests can start
// processes is (TestAttackReachAroundTheImportGraph).

// moduleFiles are the files that decide which code every package builds
// with: a change to any of them reaches every package.
var moduleFiles = map[string]bool{"go.mod": true, "go.sum": true, "go.work": true, "go.work.sum": true}

// spawners are imports with which a test starts processes, which may run
// the change's code (go build and run a command of the repository) with
// the test binary's standard output.
var spawners = map[string]bool{"os/exec": true, "syscall": true, "golang.org/x/sys/unix": true}

// Affected returns the directories whose test binary can hold code of the
// change, given the changed paths (added, modified or deleted, relative
// to the module root). all is true when every package is reached.
func Affected(t Tree, changed []string) (dirs map[string]bool, all bool) {
	if len(changed) == 0 {
		return map[string]bool{}, false
	}
	return readGraph(t).affected(changed)
}

// affected is Affected over the graph read.
func (g *graph) affected(changed []string) (dirs map[string]bool, all bool) {
	if len(changed) == 0 {
		return map[string]bool{}, false
	}
	direct := map[string]bool{}
	for _, p := range changed {
		if moduleFiles[path.Base(p)] || inVendor(p) {
			return g.allDirs(), true
		}
		d := g.owner(path.Dir(p))
		if d == "" {
			return g.allDirs(), true // outside every package: anything may run it
		}
		direct[d] = true
	}
	out := map[string]bool{}
	queue := make([]string, 0, len(direct))
	for d := range direct {
		out[d] = true
		queue = append(queue, d)
	}
	for len(queue) > 0 {
		d := queue[0]
		queue = queue[1:]
		for _, imp := range g.importers[d] {
			if !out[imp] {
				out[imp] = true
				queue = append(queue, imp)
			}
		}
	}
	for d := range g.spawns {
		out[d] = true
	}
	for d := range g.loose {
		out[d] = true
	}
	return out, false
}

func inVendor(p string) bool {
	return p == "vendor" || strings.HasPrefix(p, "vendor/") || strings.Contains(p, "/vendor/")
}

// graph is the repository's packages and who imports whom.
type graph struct {
	pkgs      map[string]bool     // directories holding .go files
	modules   map[string]string   // module path → directory
	importers map[string][]string // directory → directories importing it
	spawns    map[string]bool     // directories whose tests import a spawner
	// loose are directories whose build the graph cannot bound: cgo or
	// non-Go sources, or an import the tree cannot place.
	loose map[string]bool
}

// foreignSource are the file kinds whose compilation can include any
// file of the tree.
var foreignSource = map[string]bool{".c": true, ".h": true, ".s": true, ".S": true, ".sx": true, ".cc": true, ".cpp": true, ".cxx": true, ".hh": true, ".hpp": true, ".hxx": true, ".m": true, ".f": true, ".F": true, ".for": true, ".f90": true, ".swig": true, ".swigcxx": true, ".syso": true}

func readGraph(t Tree) *graph {
	g := &graph{pkgs: map[string]bool{}, modules: map[string]string{}, importers: map[string][]string{}, spawns: map[string]bool{}, loose: map[string]bool{}}
	dirs := t.Dirs()
	for _, d := range dirs {
		if len(goFiles(t, d)) > 0 {
			g.pkgs[d] = true
			for _, f := range t.Files(d) {
				if foreignSource[path.Ext(f)] {
					g.loose[d] = true
				}
			}
		}
		if m := ModulePath(t, join(d, "go.mod")); m != "" {
			g.modules[m] = d
		}
	}
	imports := map[string][]string{}
	for d := range g.pkgs {
		seen := map[string]bool{}
		for _, f := range goFiles(t, d) {
			src, err := t.ReadFile(join(d, f))
			if err != nil {
				continue
			}
			file, _ := parser.ParseFile(token.NewFileSet(), f, src, parser.ImportsOnly)
			if file == nil {
				continue
			}
			for _, s := range file.Imports {
				p, err := strconv.Unquote(s.Path.Value)
				if err != nil || seen[p] {
					continue
				}
				seen[p] = true
				if p == "C" {
					g.loose[d] = true
				}
				if spawners[p] && strings.HasSuffix(f, "_test.go") {
					g.spawns[d] = true
				}
				imports[d] = append(imports[d], p)
			}
		}
	}
	for d, ps := range imports {
		for _, p := range ps {
			to := g.resolve(p)
			if to != "" && to != d {
				g.importers[to] = append(g.importers[to], d)
			}
			if best, _ := g.module(p); to == "" && best != "" {
				g.loose[d] = true
			}
		}
	}
	return g
}

// resolve maps an import path to a package directory of the tree, by the
// longest module path that prefixes it; "" when no module of the tree
// provides it.
func (g *graph) resolve(imp string) string {
	best, dir := g.module(imp)
	if best == "" {
		return ""
	}
	p := path.Join(dir, strings.TrimPrefix(strings.TrimPrefix(imp, best), "/"))
	if !g.pkgs[p] {
		return ""
	}
	return p
}

// module is the module of the tree with the longest path that prefixes
// the import path, and its directory ("" when none).
func (g *graph) module(imp string) (best, dir string) {
	for m, d := range g.modules {
		if (imp == m || strings.HasPrefix(imp, m+"/")) && len(m) > len(best) {
			best, dir = m, d
		}
	}
	return best, dir
}

// owner is the package directory a path in dir belongs to: dir itself or
// its nearest ancestor with Go files ("" when none).
func (g *graph) owner(dir string) string {
	for {
		if g.pkgs[dir] {
			return dir
		}
		if dir == "." || dir == "/" || dir == "" {
			return ""
		}
		dir = path.Dir(dir)
	}
}

func (g *graph) allDirs() map[string]bool {
	out := make(map[string]bool, len(g.pkgs))
	for d := range g.pkgs {
		out[d] = true
	}
	return out
}

// ModulePath reads the module path of the go.mod at rel ("" when there
// is none).
func ModulePath(t Tree, rel string) string {
	data, err := t.ReadFile(rel)
	if err != nil {
		return ""
	}
	for line := range strings.Lines(string(data)) {
		line, _, _ = strings.Cut(line, "//")
		f := strings.Fields(line)
		if len(f) == 2 && f[0] == "module" {
			if s, err := strconv.Unquote(f[1]); err == nil {
				return s
			}
			return f[1]
		}
	}
	return ""
}
