package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"gopkg.in/yaml.v3"

	"github.com/sandgate/sandgate/blueprint"
)

// blueprintFile reads the blueprint file a tool call names, the way the
// server may read files for its caller: an attended agent that its own
// sandbox keeps from a file must not read it through ours
// (validate_blueprint {"path": "/etc/shadow"} once returned every line of
// it inside "unknown key" problems). The file must
//
//   - lie under one of the server's roots (its repository and its
//     --blueprints-dir directories), read through os.Root, so neither
//     ".." nor a symlink leads out;
//   - be named *.yaml or *.yml, be a regular file (a FIFO would hang the
//     call) and at most blueprint.MaxFileBytes;
//   - look like a blueprint (a YAML mapping with a version key) when it
//     parses as YAML at all: of any other file nothing is shown.
//
// It returns the path made absolute and the file's content; its errors
// do not repeat the path.
func (m *mcpTools) blueprintFile(path string) (string, []byte, error) {
	abs := absPath(path)
	if ext := filepath.Ext(abs); ext != ".yaml" && ext != ".yml" {
		return "", nil, errors.New("not a blueprint file (a blueprint is a .yaml or .yml file)")
	}
	for _, root := range m.roots {
		rel, err := filepath.Rel(root, abs)
		if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			continue
		}
		src, err := readUnder(root, rel)
		if err != nil {
			return "", nil, err
		}
		if !looksLikeBlueprint(src) {
			return "", nil, errors.New("not a blueprint (a YAML mapping with version, name, start and nodes); nothing of it is shown")
		}
		return abs, src, nil
	}
	where := "no repository (the server was not started in one) and no --blueprints-dir"
	if len(m.roots) > 0 {
		where = strings.Join(m.roots, ", ")
	}
	return "", nil, fmt.Errorf("outside the directories this server reads blueprints from (%s); start it with --blueprints-dir DIR for more", where)
}

// readUnder reads rel under root as a blueprint (blueprint.ReadOpen).
func readUnder(root, rel string) ([]byte, error) {
	r, err := os.OpenRoot(root)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	f, err := r.OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return blueprint.ReadOpen(f)
}

// looksLikeBlueprint: src is a blueprint being written (empty, or not
// YAML yet: its syntax errors quote no content) or a mapping with a
// version key; any other YAML file is someone else's.
func looksLikeBlueprint(src []byte) bool {
	var doc yaml.Node
	if err := yaml.Unmarshal(src, &doc); err != nil || len(doc.Content) == 0 {
		return true
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return false
	}
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value == "version" {
			return true
		}
	}
	return false
}

// mcpRoots are the directories the MCP server reads blueprints from: the
// repository it was started in, if any, and the --blueprints-dir ones.
func mcpRoots(dirs []string) []string {
	var roots []string
	if root, err := repoRoot("."); err == nil {
		roots = append(roots, root)
	}
	for _, d := range dirs {
		roots = append(roots, absPath(d))
	}
	return roots
}
