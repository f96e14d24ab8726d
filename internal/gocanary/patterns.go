package gocanary

import (
	"path"
	"strings"
)

// Which reached packages the command tests: sealing a package parses
// every test file of it and scans its other files, and a change to a
// package low in the import graph reaches most of the repository while
// the command tests a few (73 reached packages for 4 tested on
// prometheus, 0.8–1 s of the plan). So a plan given the command seals
// only the reached packages its package arguments can name.
//
// The reading over-approximates: a pattern with ... matches every
// directory whose path starts with what comes before it; an import path
// is mapped through the tree's modules (a pattern a module of the tree
// starts with matches that whole module); and anything else (std, all,
// files, paths outside the root, an import path no module of the tree
// provides, a command it cannot read) seals every reached package. Should
// a reached package the plan left unsealed still run, its report is
// refused (see Plan.stashed and Decode).

// commandDirs returns whether each directory can be a package the command
// tests; nil means any can.
func commandDirs(g *graph, root string, args []string) func(dir string) bool {
	if args == nil {
		return nil
	}
	a, ok := argv(args)
	if !ok || len(a) < 2 || a[0] != "go" || a[1] != "test" {
		return nil
	}
	_, pkgs, _, ok := goTestArgs(a[2:])
	if !ok {
		return nil
	}
	if len(pkgs) == 0 {
		pkgs = []string{"."}
	}
	var exact []string
	var prefixes []string
	for _, pat := range pkgs {
		e, pre, ok := g.patternDirs(root, pat)
		if !ok {
			return nil
		}
		exact = append(exact, e...)
		prefixes = append(prefixes, pre...)
	}
	return func(dir string) bool {
		for _, e := range exact {
			if dir == e {
				return true
			}
		}
		for _, pre := range prefixes {
			if pre == "" || strings.HasPrefix(dir, pre) || dir+"/" == pre {
				return true
			}
		}
		return false
	}
}

// patternDirs reads one package argument: the directories it names
// exactly, and the prefixes (of directory paths as strings) of those its
// ... can match; ok is false when it cannot be read.
func (g *graph) patternDirs(root, pat string) (exact, prefixes []string, ok bool) {
	if strings.HasSuffix(pat, ".go") || strings.Contains(pat, "\\") {
		return nil, nil, false
	}
	if strings.HasPrefix(pat, "/") {
		rest, ok := strings.CutPrefix(pat, strings.TrimSuffix(root, "/")+"/")
		if !ok {
			return nil, nil, false
		}
		pat = "./" + rest
	}
	if pat == "." || pat == ".." || strings.HasPrefix(pat, "./") || strings.HasPrefix(pat, "../") {
		return relativeDirs(pat)
	}
	return g.importDirs(pat)
}

// relativeDirs reads a pattern relative to the module root.
func relativeDirs(pat string) (exact, prefixes []string, ok bool) {
	rel := strings.TrimPrefix(pat, "./")
	if pat == "." {
		rel = ""
	}
	if rel == ".." || strings.HasPrefix(rel, "../") || strings.Contains(rel, "/../") || strings.HasSuffix(rel, "/..") {
		return nil, nil, false
	}
	if before, _, found := strings.Cut(rel, "..."); found {
		return nil, []string{strings.TrimPrefix(before, "./")}, true
	}
	if rel = path.Clean(rel); rel == "" {
		rel = "."
	}
	return []string{rel}, nil, true
}

// importDirs maps an import path pattern to directories through the
// tree's modules.
func (g *graph) importDirs(pat string) (exact, prefixes []string, ok bool) {
	before, _, wild := strings.Cut(pat, "...")
	if !strings.Contains(before, ".") && !strings.Contains(before, "/") {
		return nil, nil, false // std, all, cmd, a standard library path
	}
	best, dir := g.module(before)
	for m, d := range g.modules {
		if wild && strings.HasPrefix(m, before) {
			prefixes = append(prefixes, dirPrefix(d, ""))
		}
	}
	if best == "" {
		if len(prefixes) > 0 {
			return nil, prefixes, true
		}
		return nil, nil, false // no module of the tree provides it
	}
	rel := strings.TrimPrefix(strings.TrimPrefix(before, best), "/")
	if wild {
		return nil, append(prefixes, dirPrefix(dir, rel)), true
	}
	return []string{path.Join(dir, rel)}, nil, true
}

// dirPrefix is the string prefix of the directories under dir whose path
// below it starts with rel.
func dirPrefix(dir, rel string) string {
	if dir == "." {
		return rel
	}
	return dir + "/" + rel
}
