package nodes

import (
	"strings"

	"github.com/sandgate/sandgate/blueprint"
	"github.com/sandgate/sandgate/nodes/agent"
)

// Shorthands keep the spec tables readable.
const (
	kStr  = blueprint.KindString
	kInt  = blueprint.KindInt
	kFlt  = blueprint.KindFloat
	kBool = blueprint.KindBool
	kDur  = blueprint.KindDuration
	kList = blueprint.KindStringList
	kMap  = blueprint.KindStringMap
	kCmd  = blueprint.KindCommand
	kCmds = blueprint.KindCommandList
)

// Specs returns the declarations of every built-in node type: the keys each
// accepts and the outputs each publishes. Validation and the JSON Schema are
// generated from these.
func Specs() []blueprint.NodeType {
	return []blueprint.NodeType{
		{Name: "agent", Stage: "propose", Doc: "an LLM with a small toolset, working in the sandboxed workspace",
			Fields: map[string]blueprint.Field{
				"prompt":          {Kind: kStr, Required: true, Doc: "system prompt; templates see inputs, outputs and feedback"},
				"model":           {Kind: kStr, Doc: "model name, or script:FILE / replay:FILE for offline runs"},
				"base_url":        {Kind: kStr, NoTemplate: true, Endpoint: true, Doc: "OpenAI-compatible endpoint; only one the operator allows (--allow-endpoint), else the operator's --base-url / OPENAI_BASE_URL"},
				"api_key_env":     {Kind: kStr, NoTemplate: true, CredentialEnv: true, Doc: "environment variable holding the key, for an allowed base_url (default: the operator's --api-key-env / OPENAI_API_KEY)"},
				"tools":           {Kind: kList, Doc: "subset of " + strings.Join(agent.ToolNames(), ", ")},
				"max_turns":       {Kind: kInt, Doc: "model calls before the node fails (default 20)"},
				"max_tokens":      {Kind: kInt, Doc: "tokens this node may spend"},
				"temperature":     {Kind: kFlt, Doc: "sampling temperature"},
				"request_timeout": {Kind: kDur, Doc: "timeout of one model request (default 2m)"},
			},
			Outputs: map[string]blueprint.Kind{"summary": kStr, "turns": kInt, "tokens_in": kInt, "tokens_out": kInt, "tool_calls": kInt},
			Check:   agent.Check},
		{Name: "shell", Stage: "verify", Doc: "runs a command in the sandbox; passes on exit code 0",
			Fields: map[string]blueprint.Field{
				"run": {Kind: kCmd, Required: true, NoTemplate: true, Doc: "command line run by sh -c in the workspace (no templates), or {argv: [program, arg...]} run without a shell, whose items may name patterned inputs"},
			},
			Outputs: map[string]blueprint.Kind{"exit_code": kInt, "output": kStr}},
		{Name: "lint", Stage: "verify", Gate: true, Doc: "runs linters and parses file:line:col diagnostics",
			Fields: map[string]blueprint.Field{
				"run": {Kind: kCmds, Required: true, NoTemplate: true, Doc: "one or more linter commands, each a shell command line (no templates) or {argv: [program, arg...]}"},
			},
			Outputs: map[string]blueprint.Kind{"diagnostics": kInt, "files": kList}},
		{Name: "test", Stage: "verify", Gate: true, Doc: "runs tests and counts them from structured output",
			Fields: map[string]blueprint.Field{
				"run":             {Kind: kCmd, Required: true, NoTemplate: true, Doc: "test command: a shell command line (no templates) or {argv: [program, arg...]} run without a shell, whose items may name patterned inputs"},
				"format":          {Kind: kStr, Enum: []string{"auto", "go-json", "junit", "tap"}, Doc: "report format (default auto)"},
				"report":          {Kind: kStr, NoTemplate: true, Doc: "JUnit XML file the command writes under /tmp (a gate may not write in the workspace); removed before each run, so the command must write it anew"},
				"rerun_failed":    {Kind: kInt, Doc: "re-run failures up to N times to tell flaky from broken"},
				"hidden":          {Kind: kStr, NoTemplate: true, Doc: "directory of held-out tests, run in a throwaway box built from the change; never placed in the run's workspace"},
				"hidden_feedback": {Kind: kStr, Enum: []string{"count", "names"}, Doc: "what the agent learns when held-out tests fail: count (default) or names"},
				"allow_no_tests": {Kind: kList, NoTemplate: true,
					Doc: "Go packages (import paths, or a prefix ending in /...) allowed to have test files yet run no test; any other such package fails the gate"},
				"allow_test_detection": {Kind: kBool,
					Doc: "let the change's non-test Go files detect the test binary (testing.Testing or testing.Init, test.* flag names, a .test binary name, writes to os.Args); by default such code fails the gate, as it could behave differently under test"},
			},
			Outputs: map[string]blueprint.Kind{"passed": kInt, "failed": kInt, "skipped": kInt, "failures": kList, "flaky": kList},
			Check:   checkTest},
		{Name: "diff_cap", Stage: "verify", Gate: true, Doc: "fails when the change against the base commit is too large",
			Fields: map[string]blueprint.Field{
				"max_lines": {Kind: kInt, Doc: "lines added plus deleted"},
				"max_files": {Kind: kInt, Doc: "files changed, binary files included"},
				"max_bytes": {Kind: kInt, Doc: "bytes of added or modified files (apparent size) plus deleted files' size"},
				"exclude":   {Kind: kList, NoTemplate: true, Doc: "globs not counted (lock files, generated code)"},
			},
			Outputs: map[string]blueprint.Kind{"lines": kInt, "added": kInt, "deleted": kInt, "files": kInt, "bytes": kInt, "binary": kInt},
			Check:   checkDiffCap},
		{Name: "protect", Stage: "verify", Gate: true, Doc: "fails (or reverts) when protected paths changed",
			Fields: map[string]blueprint.Field{
				"paths":  {Kind: kList, Required: true, NoTemplate: true, Doc: "globs the agent must not change"},
				"action": {Kind: kStr, Enum: []string{"fail", "revert"}, Doc: "fail (default) or revert the changes"},
			},
			Outputs: map[string]blueprint.Kind{"changed": kList}},
		{Name: "parity", Stage: "verify", Gate: true, Doc: "checks sandbox tool versions against what the repo pins",
			Fields: map[string]blueprint.Field{
				"tools": {Kind: kMap, NoTemplate: true, Doc: "tool name to required version prefix, beside go.mod and .tool-versions"},
			},
			Outputs: map[string]blueprint.Kind{"mismatches": kList}},
		{Name: "apply_patch", Stage: "propose", Doc: "applies a unified diff to the workspace",
			Fields: map[string]blueprint.Field{
				"patch":   {Kind: kStr, Required: true, Doc: "the diff, usually a template over inputs or outputs"},
				"preview": {Kind: kBool, Doc: "write the diff for review instead of applying it"},
			},
			Outputs: map[string]blueprint.Kind{"files": kInt}},
		{Name: "git_commit", Stage: "promote", Doc: "commits the workspace change on a new branch",
			Fields: map[string]blueprint.Field{
				"message": {Kind: kStr, Doc: "commit message"},
				"branch":  {Kind: kStr, Doc: "branch name (default sandgate/<run-id>)"},
				"author":  {Kind: kStr, Doc: "Name <email> (default sandgate <sandgate@localhost>)"},
			},
			Outputs: map[string]blueprint.Kind{"commit": kStr, "branch": kStr},
			Check:   checkGitCommit},
		{Name: "git_push", Stage: "promote", Doc: "pushes the committed branch with credentials kept outside the sandbox",
			Fields: map[string]blueprint.Field{
				"remote": {Kind: kStr, Required: true, Endpoint: true, KeyOptional: true, Trusted: []string{"https://github.com"},
					Doc: "remote URL or path (used by the harness's git client, never a shell); with token_env, an https://github.com URL or one under a prefix the operator allows (--allow-endpoint)"},
				"token_env":        {Kind: kStr, NoTemplate: true, CredentialEnv: true, Doc: "environment variable holding an HTTP token, sent only to the remote's host and only for an http(s) remote on https://github.com or under an --allow-endpoint prefix"},
				"delete_on_reject": {Kind: kBool, Doc: "when the change is rejected in the local review queue (sandgate review reject), delete the pushed branch on the remote, only if it still points at the pushed commit"},
			},
			Outputs: map[string]blueprint.Kind{"ref": kStr, "pushed": kBool}},
		{Name: "review", Stage: "promote", Doc: "hands the verified change to people: a local queue or a pull request",
			Fields: map[string]blueprint.Field{
				"queue":     {Kind: kStr, Enum: []string{"local", "github"}, Doc: "local (default) or github"},
				"title":     {Kind: kStr, Doc: "review title"},
				"repo":      {Kind: kStr, NoTemplate: true, Doc: "owner/name, for github"},
				"base":      {Kind: kStr, NoTemplate: true, Doc: "base branch, for github (default main)"},
				"base_url":  {Kind: kStr, NoTemplate: true, Endpoint: true, Trusted: []string{"https://api.github.com"}, Doc: "API base URL, for GitHub Enterprise (default https://api.github.com); any other needs the operator's --allow-endpoint"},
				"token_env": {Kind: kStr, NoTemplate: true, CredentialEnv: true, Doc: "environment variable holding the token (default GITHUB_TOKEN)"},
				"dir":       {Kind: kStr, NoTemplate: true, Doc: "local queue directory (default .sandgate/reviews)"},
			},
			Outputs: map[string]blueprint.Kind{"url": kStr, "id": kStr},
			Check:   checkReview},
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
