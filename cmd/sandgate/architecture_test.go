package main

import (
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestArchitectureMap keeps ARCHITECTURE.md a true map: every path it
// names under one of the module's top-level directories exists, and every
// package of the module is in the code map — by its own path, or by an
// ancestor's path plus its name — so a package added or moved without
// updating the map fails here.
func TestArchitectureMap(t *testing.T) {
	root := moduleRoot(t)
	doc, err := os.ReadFile(filepath.Join(root, "ARCHITECTURE.md"))
	if err != nil {
		t.Fatal(err)
	}
	quoted := map[string]bool{}
	for _, m := range regexp.MustCompile("`([^`\n]+)`").FindAllStringSubmatch(string(doc), -1) {
		quoted[strings.TrimSuffix(m[1], "/")] = true
	}
	tops := map[string]bool{}
	for _, e := range mustReadDir(t, root) {
		if e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
			tops[e.Name()] = true
		}
	}
	for q := range quoted {
		first, _, _ := strings.Cut(q, "/")
		if !tops[first] || strings.ContainsAny(q, " *") {
			continue
		}
		if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(q))); err != nil {
			t.Errorf("ARCHITECTURE.md names %s, which does not exist", q)
		}
	}
	pkgs := strings.Fields(goCmd(t, nil, "list", "-f", "{{.Dir}}", "./..."))
	for _, dir := range pkgs {
		rel, err := filepath.Rel(root, dir)
		if err != nil || rel == "." {
			continue
		}
		rel = filepath.ToSlash(rel)
		if strings.HasPrefix(rel, "examples/") && quoted["examples"] {
			continue // each example is runnable on its own; the map names the folder
		}
		if !mapped(rel, quoted) {
			t.Errorf("package %s is not in ARCHITECTURE.md's code map", rel)
		}
	}
}

// mapped: the package is named by its path, or an ancestor is named and
// so is the package's own name.
func mapped(rel string, quoted map[string]bool) bool {
	if quoted[rel] {
		return true
	}
	for dir := path.Dir(rel); dir != "."; dir = path.Dir(dir) {
		if quoted[dir] && quoted[path.Base(rel)] {
			return true
		}
	}
	return false
}

func mustReadDir(t *testing.T, dir string) []os.DirEntry {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	return es
}
