package nodes_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sandgate/sandgate/blueprint"
	"github.com/sandgate/sandgate/nodes"
	"github.com/sandgate/sandgate/nodes/internal/nodetest"
	"github.com/sandgate/sandgate/runtime"
	"github.com/sandgate/sandgate/runtime/runtimetest"
)

// conformanceCase is a built-in type's realistic minimal configuration
// over a seeded repository, in a sandboxed workspace.
type conformanceCase func(t *testing.T, repo string) runtimetest.Case

// Setup steps for promotion types: a change, a passing gate, a commit.
const (
	stepFix    = "fix: {type: shell, run: \"sed -i 's/a - b/a + b/' calc.go\"}"
	stepGate   = "gate: {type: lint, run: gofmt -l .}"
	stepCommit = "commit: {type: git_commit, message: 'fix: Add adds'}"
)

func conformanceCases() map[string]conformanceCase {
	plain := func(body string) conformanceCase {
		return func(t *testing.T, repo string) runtimetest.Case { return runtimetest.Case{Body: body} }
	}
	return map[string]conformanceCase{
		"shell":       plain("run: echo hello"),
		"lint":        plain("run: [gofmt -l ., go vet ./...]"),
		"test":        plain("run: go test -json ./..."),
		"diff_cap":    plain("max_lines: 10"),
		"protect":     plain("paths: [calc_test.go]"),
		"parity":      plain("tools: {go: go1}"),
		"apply_patch": plain("patch: |\n" + indentLines(nodetest.FixPatch, "  ")), // fixPatch: patch_test.go
		"agent": func(t *testing.T, repo string) runtimetest.Case {
			// One script model serves every attempt the suite makes (a
			// script continues across attempts, and fails an attempt once
			// it runs out): one read-then-done exchange per attempt.
			script := filepath.Join(t.TempDir(), "script.yaml")
			os.WriteFile(script, []byte(strings.Repeat("- tool_calls:\n    - {function: {name: read_file, arguments: {path: calc.go}}}\n- content: Read calc.go; nothing to change.\n", 64)), 0o644)
			return runtimetest.Case{Body: "prompt: look at calc\nmodel: script:" + script}
		},
		"git_commit": func(t *testing.T, repo string) runtimetest.Case {
			return runtimetest.Case{Body: "message: 'fix: Add adds'", Prepare: setupThen(t, repo, stepFix, stepGate)}
		},
		"git_push": func(t *testing.T, repo string) runtimetest.Case {
			remote := filepath.Join(t.TempDir(), "remote.git")
			nodetest.Run(t, "", "git", "clone", "-q", "--bare", repo, remote)
			return runtimetest.Case{Body: "remote: " + remote, Prepare: setupThen(t, repo, stepFix, stepGate, stepCommit)}
		},
		"ci": func(t *testing.T, repo string) runtimetest.Case {
			remote := filepath.Join(t.TempDir(), "remote.git")
			nodetest.Run(t, "", "git", "clone", "-q", "--bare", repo, remote)
			push := "push: {type: git_push, remote: " + remote + "}"
			return runtimetest.Case{Body: "provider: command\nrun: go test -json ./...", Prepare: setupThen(t, repo, stepFix, stepGate, stepCommit, push)}
		},
		"review": func(t *testing.T, repo string) runtimetest.Case {
			return runtimetest.Case{Body: "dir: " + t.TempDir(), Prepare: setupThen(t, repo, stepFix, stepGate, stepCommit)}
		},
	}
}

func indentLines(s, prefix string) string {
	return prefix + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n"+prefix) + "\n"
}

// TestBuiltinsConform runs the node conformance suite against every
// registered built-in type; a type without a case fails.
func TestBuiltinsConform(t *testing.T) {
	cases := conformanceCases()
	for _, typ := range nodes.BuiltinTypes() {
		t.Run(typ.Spec.Name, func(t *testing.T) {
			mk, ok := cases[typ.Spec.Name]
			if !ok {
				t.Fatalf("built-in type %s has no conformance case", typ.Spec.Name)
			}
			repo := nodetest.SeedRepo(t)
			c := mk(t, repo)
			c.Type = typ
			if c.Prepare == nil {
				c.Prepare = prepareFor(t, repo)
			}
			runtimetest.Run(t, c)
		})
	}
}

func prepareFor(t *testing.T, repo string) runtime.Prepare {
	return nodes.Environment(nodes.EnvOptions{Repo: repo, CacheDir: t.TempDir(), Caches: nodes.GoCaches()})
}

// setupThen prepares the sandboxed workspace and then runs steps in it,
// each a built-in node that must pass: promotion types act only on a
// change a gate passed (and push and review on a commit), so their
// environment carries one, as a run's would by the time they run.
func setupThen(t *testing.T, repo string, steps ...string) runtime.Prepare {
	prepare := prepareFor(t, repo)
	src := "version: 1\nname: setup\nstart: s0\nnodes:\n"
	for i, s := range steps {
		id, body, _ := strings.Cut(s, ": ")
		src += fmt.Sprintf("  s%d: %s # %s\n", i, strings.Replace(body, "}", fmt.Sprintf(", next: s%d}", i+1), 1), id)
	}
	src += fmt.Sprintf("  s%d: {type: succeed}\n", len(steps))
	bp, err := nodes.NewRegistry().Parse("setup.yaml", []byte(src))
	if err != nil {
		t.Fatalf("setup blueprint: %v\n%s", err, src)
	}
	types := map[string]runtime.Type{}
	for _, typ := range nodes.BuiltinTypes() {
		types[typ.Spec.Name] = typ
	}
	return func(ctx context.Context, runDir string, cbp *blueprint.Blueprint, resume bool) (*runtime.Environment, error) {
		env, err := prepare(ctx, runDir, cbp, resume)
		if err != nil {
			return nil, err
		}
		for i := range steps {
			id := fmt.Sprintf("s%d", i)
			if err := runStep(ctx, types, bp.Nodes[id], env, runDir); err != nil {
				env.Close()
				return nil, fmt.Errorf("setup step %s: %w", steps[i], err)
			}
		}
		return env, nil
	}
}

func runStep(ctx context.Context, types map[string]runtime.Type, spec *blueprint.Node, env *runtime.Environment, runDir string) error {
	n, err := types[spec.Type].New(spec)
	if err != nil {
		return err
	}
	in := &runtime.Input{RunID: filepath.Base(runDir), NodeID: spec.ID, Attempt: 1, Spec: spec, Scope: &blueprint.Scope{},
		Workspace: env.Workspace, Dir: filepath.Join(runDir, "setup", spec.ID), Services: env.Services,
		Logger: slog.New(slog.DiscardHandler)}
	res, err := n.Run(ctx, in)
	switch {
	case err != nil:
		return err
	case res.Outcome != runtime.OutcomePass:
		return fmt.Errorf("%s: %s", res.Outcome, res.Reason)
	}
	return nil
}
