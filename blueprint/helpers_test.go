package blueprint_test

import "github.com/sandgate/sandgate/blueprint"

// testTypes are test-only stand-ins for the built-in node types, written by
// hand because the blueprint package must not import nodes (nodes imports
// blueprint). They are deliberately independent of nodes/specs.go: these
// tests pin the validator's behaviour (kinds, templates, command forms,
// enums, required keys, output references, gates), not the built-ins'
// configuration, which nodes and cmd/sandgate test against the real specs
// (every blueprint in the repository is validated there with nodes.Types).
//
// What must match the built-ins is what changes how the decoder treats a
// key or a reference: the run keys are commands (a shell line or argv, no
// templates), lint takes a command list, the gate types are gates, and the
// outputs that testdata blueprints name exist under the built-ins' names.
// Keys and outputs no test uses are left out.
var testTypes = blueprint.MapTypes{
	"agent": {Name: "agent", Fields: map[string]blueprint.Field{
		"prompt":    {Kind: blueprint.KindString, Required: true},
		"tools":     {Kind: blueprint.KindStringList},
		"max_turns": {Kind: blueprint.KindInt},
		"model":     {Kind: blueprint.KindString},
	}, Outputs: map[string]blueprint.Kind{"summary": blueprint.KindString, "turns": blueprint.KindInt, "tokens_in": blueprint.KindInt, "tokens_out": blueprint.KindInt}},
	"lint": {Name: "lint", Gate: true, Fields: map[string]blueprint.Field{
		"run": {Kind: blueprint.KindCommandList, Required: true, NoTemplate: true},
	}, Outputs: map[string]blueprint.Kind{"diagnostics": blueprint.KindInt}},
	"diff_cap": {Name: "diff_cap", Gate: true, Fields: map[string]blueprint.Field{
		"max_lines": {Kind: blueprint.KindInt},
		"max_files": {Kind: blueprint.KindInt},
		"exclude":   {Kind: blueprint.KindStringList, NoTemplate: true},
	}, Outputs: map[string]blueprint.Kind{"lines": blueprint.KindInt, "files": blueprint.KindInt}},
	"test": {Name: "test", Gate: true, Fields: map[string]blueprint.Field{
		"run": {Kind: blueprint.KindCommand, Required: true, NoTemplate: true},
	}, Outputs: map[string]blueprint.Kind{"passed": blueprint.KindInt, "failed": blueprint.KindInt, "skipped": blueprint.KindInt, "failures": blueprint.KindStringList}},
	"git_commit": {Name: "git_commit", Fields: map[string]blueprint.Field{
		"message": {Kind: blueprint.KindString},
		"branch":  {Kind: blueprint.KindString},
	}, Outputs: map[string]blueprint.Kind{"commit": blueprint.KindString, "branch": blueprint.KindString}},
	"review": {Name: "review", Fields: map[string]blueprint.Field{
		"queue": {Kind: blueprint.KindString, Enum: []string{"local", "github"}},
	}},
	"shell": {Name: "shell", Fields: map[string]blueprint.Field{
		"run": {Kind: blueprint.KindCommand, Required: true, NoTemplate: true},
	}, Outputs: map[string]blueprint.Kind{"exit_code": blueprint.KindInt, "output": blueprint.KindString}},
}
