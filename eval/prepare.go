package eval

import (
	"context"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"gopkg.in/yaml.v3"
)

// git runs git in dir and returns its trimmed output.
func git(ctx context.Context, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	// The operator's git configuration must not change what is graded
	// (hooks, signing, a global excludes file).
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_AUTHOR_NAME=sandgate eval", "GIT_AUTHOR_EMAIL=eval@sandgate.invalid",
		"GIT_COMMITTER_NAME=sandgate eval", "GIT_COMMITTER_EMAIL=eval@sandgate.invalid")
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("git %s (in %s): %w: %s", strings.Join(args, " "), dir, err, strings.TrimSpace(string(out)))
	}
	return strings.TrimSpace(string(out)), nil
}

// SeedRepo commits the files of src into a fresh repository at dst (on
// branch main) and returns dst. Shipped task sets carry their
// repositories this way: a nested .git cannot be committed.
func SeedRepo(ctx context.Context, src, dst string) error {
	if err := os.RemoveAll(dst); err != nil {
		return err
	}
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	if out, err := exec.CommandContext(ctx, "cp", "-R", "--", src+"/.", dst).CombinedOutput(); err != nil {
		return fmt.Errorf("copy %s: %w: %s", src, err, out)
	}
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"}, {"commit", "-q", "--no-verify", "-m", "base"}} {
		if _, err := git(ctx, dst, args...); err != nil {
			return err
		}
	}
	return nil
}

// prepareRepo settles a task's repository (seeding it when the task
// gives files), its git directory and its base commit.
func (e *engine) prepareRepo(ctx context.Context, t *Task, dir string) (repo, gitDir, base string, err error) {
	repo = t.Repo
	if t.Seed != "" {
		repo = filepath.Join(dir, "repo")
		if err := SeedRepo(ctx, t.Seed, repo); err != nil {
			return "", "", "", fmt.Errorf("seed %s: %w", t.Seed, err)
		}
	}
	if gitDir, err = git(ctx, repo, "rev-parse", "--absolute-git-dir"); err != nil {
		return "", "", "", fmt.Errorf("%s is not a git repository: %w", repo, err)
	}
	if base, err = git(ctx, repo, "rev-parse", "--verify", "--end-of-options", t.Commit+"^{commit}"); err != nil {
		return "", "", "", fmt.Errorf("commit %q in %s: %w", t.Commit, repo, err)
	}
	return repo, gitDir, base, nil
}

// request builds the task's run: its inputs (with a throwaway bare
// remote when the blueprint takes a remote the task did not give), its
// model and its copy of the blueprint.
func (e *engine) request(t *Task, repo, base, dir string) (*RunRequest, error) {
	inputs := maps.Clone(t.Inputs)
	if inputs == nil {
		inputs = map[string]any{}
	}
	if _, given := inputs["remote"]; e.hasRemote && !given {
		remote := filepath.Join(dir, "remote.git")
		_ = os.RemoveAll(remote)
		if _, err := git(context.Background(), dir, "init", "-q", "--bare", remote); err != nil {
			return nil, err
		}
		inputs["remote"] = remote
	}
	model := t.Model
	if model == "" {
		model = e.o.Model
	}
	file, src := e.o.Blueprint, e.o.Source
	if t.GateHidden != "" {
		var err error
		if src, err = withGateHidden(src, t.GateHidden); err != nil {
			return nil, fmt.Errorf("%s: gate_hidden: %w", e.o.Blueprint, err)
		}
		file = filepath.Join(dir, "blueprint.yaml")
		if err := os.WriteFile(file, src, 0o644); err != nil {
			return nil, err
		}
	}
	return &RunRequest{Task: t, File: file, Source: src, Repo: repo, Rev: base, Inputs: inputs, Model: model,
		RunsDir: filepath.Join(e.o.Out, "runs", t.ID), ReviewDir: filepath.Join(dir, "reviews")}, nil
}

// withGateHidden sets hidden: DIR on every test gate of a blueprint's
// source, so the gates also run the task's gate-level held-out tests.
func withGateHidden(src []byte, dir string) ([]byte, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(src, &doc); err != nil {
		return nil, err
	}
	if len(doc.Content) != 1 {
		return nil, fmt.Errorf("the blueprint is not one YAML document")
	}
	nodesMap := mapValue(doc.Content[0], "nodes")
	if nodesMap == nil || nodesMap.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("the blueprint has no nodes mapping")
	}
	n := 0
	for i := 1; i < len(nodesMap.Content); i += 2 {
		node := nodesMap.Content[i]
		if typ := mapValue(node, "type"); typ == nil || typ.Value != "test" {
			continue
		}
		if v := mapValue(node, "hidden"); v != nil {
			return nil, fmt.Errorf("nodes.%s already has held-out tests (hidden: %s)", nodesMap.Content[i-1].Value, v.Value)
		}
		node.Content = append(node.Content,
			&yaml.Node{Kind: yaml.ScalarNode, Value: "hidden"},
			&yaml.Node{Kind: yaml.ScalarNode, Value: dir, Style: yaml.DoubleQuotedStyle})
		n++
	}
	if n == 0 {
		return nil, fmt.Errorf("the blueprint has no test gate to run them")
	}
	return yaml.Marshal(&doc)
}

// mapValue is the value of key in a mapping node, or nil.
func mapValue(m *yaml.Node, key string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}
