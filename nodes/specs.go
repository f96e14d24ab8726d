package nodes

import (
	"github.com/sandgate/sandgate/blueprint"
	"github.com/sandgate/sandgate/nodes/agent"
)

// Shorthands keep the spec tables readable.
const (
	kStr   = blueprint.KindString
	kInt   = blueprint.KindInt
	kFloat = blueprint.KindFloat
	kBool  = blueprint.KindBool
	kList  = blueprint.KindStringList
)

// Specs returns the declarations of every built-in node type: the keys each
// accepts and the outputs each publishes. Validation and the JSON Schema are
// generated from these; each type's keys come from the tags of its config
// struct (config.go, agent.Config), which its factory decodes.
func Specs() []blueprint.NodeType {
	return []blueprint.NodeType{
		blueprint.Configured[agent.Config](blueprint.NodeType{Name: "agent", Stage: "propose", Doc: "an LLM with a small toolset, working in the sandboxed workspace",
			Outputs: map[string]blueprint.Kind{"summary": kStr, "turns": kInt, "tokens_in": kInt, "tokens_out": kInt,
				"tokens_cached": kInt, "cost": kFloat, "model": kStr, "tool_calls": kInt}}),
		blueprint.Configured[ShellConfig](blueprint.NodeType{Name: "shell", Stage: "verify", Doc: "runs a command in the sandbox; passes on exit code 0",
			Outputs: map[string]blueprint.Kind{"exit_code": kInt, "output": kStr}}),
		blueprint.Configured[LintConfig](blueprint.NodeType{Name: "lint", Stage: "verify", Gate: true, Doc: "runs linters and parses file:line:col diagnostics",
			Outputs: map[string]blueprint.Kind{"diagnostics": kInt, "files": kList}}),
		blueprint.Configured[TestConfig](blueprint.NodeType{Name: "test", Stage: "verify", Gate: true, Doc: "runs tests and counts them from structured output",
			Outputs: map[string]blueprint.Kind{"passed": kInt, "failed": kInt, "skipped": kInt, "failures": kList, "flaky": kList}}),
		blueprint.Configured[DiffCapConfig](blueprint.NodeType{Name: "diff_cap", Stage: "verify", Gate: true, Doc: "fails when the change against the base commit is too large",
			Outputs: map[string]blueprint.Kind{"lines": kInt, "added": kInt, "deleted": kInt, "files": kInt, "bytes": kInt, "binary": kInt, "ignored": kInt}}),
		blueprint.Configured[ProtectConfig](blueprint.NodeType{Name: "protect", Stage: "verify", Gate: true, Doc: "fails (or reverts) when protected paths changed",
			Outputs: map[string]blueprint.Kind{"changed": kList}}),
		blueprint.Configured[ParityConfig](blueprint.NodeType{Name: "parity", Stage: "verify", Gate: true, Doc: "checks sandbox tool versions against what the repo pins",
			Outputs: map[string]blueprint.Kind{"mismatches": kList}}),
		blueprint.Configured[ApplyPatchConfig](blueprint.NodeType{Name: "apply_patch", Stage: "propose", Doc: "applies a unified diff to the workspace",
			Outputs: map[string]blueprint.Kind{"files": kInt}}),
		blueprint.Configured[GitCommitConfig](blueprint.NodeType{Name: "git_commit", Stage: "promote", Doc: "commits the workspace change (as git add -A would stage it) on the run's branch",
			Outputs: map[string]blueprint.Kind{"commit": kStr, "branch": kStr, "parent": kStr, "attempt": kInt, "ignored": kList, "ignored_count": kInt}}),
		blueprint.Configured[GitPushConfig](blueprint.NodeType{Name: "git_push", Stage: "promote", Doc: "pushes the committed branch with credentials kept outside the sandbox",
			Outputs: map[string]blueprint.Kind{"ref": kStr, "pushed": kBool, "remote": kStr}}),
		blueprint.Configured[CIConfig](blueprint.NodeType{Name: "ci", Stage: "promote", Doc: "waits for CI on the commit the run pushed (within the node's timeout, default 30m) and fails with the failing checks and their log tails",
			Outputs: map[string]blueprint.Kind{"state": kStr, "failed": kList, "url": kStr, "commit": kStr}}),
		blueprint.Configured[ReviewConfig](blueprint.NodeType{Name: "review", Stage: "promote", Doc: "hands the verified change to people: a local queue or a pull request",
			Outputs: map[string]blueprint.Kind{"url": kStr, "id": kStr, "decision": kStr, "comments": kInt}}),
	}
}

// Types returns the built-in node types as a blueprint.TypeSet.
func Types() blueprint.MapTypes {
	m := blueprint.MapTypes{}
	for _, t := range Specs() {
		m[t.Name] = t
	}
	return m
}
