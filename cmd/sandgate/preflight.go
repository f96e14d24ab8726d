package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/sandgate/sandgate/blueprint"
	"github.com/sandgate/sandgate/blueprints"
	"github.com/sandgate/sandgate/internal/cliflag"
	"github.com/sandgate/sandgate/nodes"
	"github.com/sandgate/sandgate/runtime"
)

// resolveBlueprint loads FILE, or, when no such file exists and the
// argument is a plain name, the blueprint shipped in the binary under that
// name (blueprints/NAME.yaml, embedded: no path into the source tree).
func resolveBlueprint(reg *runtime.Registry, arg string) (*blueprint.Blueprint, error) {
	if _, err := os.Stat(arg); err == nil || strings.ContainsAny(arg, `/\`) || strings.HasSuffix(arg, ".yaml") || strings.HasSuffix(arg, ".yml") {
		return reg.Load(arg)
	}
	src, err := fs.ReadFile(blueprints.FS, arg+".yaml")
	if err != nil {
		return nil, fmt.Errorf("no blueprint file %q and no built-in blueprint of that name (built in: %s)", arg, strings.Join(builtinNames(), ", "))
	}
	return reg.Parse(arg+".yaml", src)
}

// builtinNames lists the blueprints shipped in the binary.
func builtinNames() []string {
	paths, _ := fs.Glob(blueprints.FS, "*.yaml")
	names := make([]string, len(paths))
	for i, p := range paths {
		names[i] = strings.TrimSuffix(p, ".yaml")
	}
	sort.Strings(names)
	return names
}

// checkInputs is the runtime's input check done before anything is
// created, with one line per problem that says how to fix it.
func checkInputs(bp *blueprint.Blueprint, in cliflag.Inputs) error {
	var problems []string
	for k, v := range in {
		decl, ok := bp.Inputs[k]
		switch {
		case !ok:
			problems = append(problems, fmt.Sprintf("unknown input %q (%s takes: %s)", k, bp.Name, orElse(strings.Join(bp.InputOrder, ", "), "no inputs")))
		case decl.Type == "string":
			if err := decl.CheckValue(v); err != nil {
				problems = append(problems, err.Error())
			}
		}
	}
	for _, name := range bp.InputOrder {
		if _, ok := in[name]; !ok && bp.Inputs[name].Required {
			problems = append(problems, fmt.Sprintf("missing required input %s (--input %s=VALUE: %s)", name, name, orElse(bp.Inputs[name].Description, "no description")))
		}
	}
	if len(problems) == 0 {
		return nil
	}
	sort.Strings(problems)
	return errors.New(strings.Join(problems, "; "))
}

// checkModelKeys fails when an agent node would call a real model whose
// key is not in the environment.
func checkModelKeys(bp *blueprint.Blueprint, rf *runFlags) error {
	for _, id := range bp.Order {
		n := bp.Nodes[id]
		if n.Type != "agent" {
			continue
		}
		model, _ := n.Config["model"].(string)
		if rf.model != "" {
			model = rf.model
		}
		if strings.HasPrefix(model, "script:") || strings.HasPrefix(model, "replay:") {
			continue
		}
		key := orElse(rf.apiKeyEnv, "OPENAI_API_KEY")
		if u, _ := n.Config["base_url"].(string); u != "" {
			if k, _ := n.Config["api_key_env"].(string); k != "" {
				key = k
			}
		}
		if os.Getenv(key) == "" {
			return fmt.Errorf("node %s calls a model but %s is not set (export it, name another variable with --api-key-env, or run offline with --model script:FILE)", id, key)
		}
	}
	return nil
}

// checkRemotes fails when a git_push node pushes to a local path that does
// not exist, or would send its token to a remote the operator did not
// allow: the run would do all its work and fail at the end.
func checkRemotes(bp *blueprint.Blueprint, inputs cliflag.Inputs, repo string, allowed []string) error {
	scope := &blueprint.Scope{Inputs: withDefaults(bp, inputs)}
	for _, id := range bp.Order {
		n := bp.Nodes[id]
		if n.Type != "git_push" {
			continue
		}
		remote, _ := n.Config["remote"].(string)
		if t, ok := n.Templates["remote"]; ok {
			r, err := t.Render(scope)
			if err != nil {
				continue // depends on more than inputs; the node reports it
			}
			remote = r
		}
		if tok, _ := n.Config["token_env"].(string); tok != "" {
			if err := blueprint.CheckEndpoint(nodes.Types()["git_push"].Fields["remote"], remote, allowed); err != nil {
				return fmt.Errorf("node %s pushes with %s: %w", id, tok, err)
			}
		}
		path, ok := localRemote(remote)
		if !ok {
			continue
		}
		if !filepath.IsAbs(path) {
			path = filepath.Join(repo, path)
		}
		if _, err := os.Stat(path); err != nil {
			return fmt.Errorf("node %s pushes to %s, which does not exist (create it with git init --bare, or pass another --input)", id, remote)
		}
	}
	return nil
}

// localRemote reports whether a git remote names a local path, and which.
func localRemote(r string) (string, bool) {
	if p, ok := strings.CutPrefix(r, "file://"); ok {
		return p, true
	}
	if r == "" || strings.Contains(r, "://") {
		return "", false
	}
	// scp-like user@host:path has a colon before any slash.
	if i := strings.IndexByte(r, ':'); i >= 0 && !strings.Contains(r[:i], "/") {
		return "", false
	}
	return r, true
}

func withDefaults(bp *blueprint.Blueprint, in cliflag.Inputs) map[string]any {
	out := map[string]any{}
	for k, d := range bp.Inputs {
		if d.Default != nil {
			out[k] = d.Default
		}
	}
	for k, v := range in {
		out[k] = v
	}
	return out
}
