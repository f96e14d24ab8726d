package blueprint_test

import "github.com/sandgate/sandgate/blueprint"

// testTypes mirrors the shape of the built-in node types without importing
// the nodes package, which the blueprint package must not depend on.
var testTypes = blueprint.MapTypes{
	"agent": {Name: "agent", Fields: map[string]blueprint.Field{
		"prompt":    {Kind: blueprint.KindString, Required: true},
		"tools":     {Kind: blueprint.KindStringList},
		"max_turns": {Kind: blueprint.KindInt},
		"model":     {Kind: blueprint.KindString},
	}, Outputs: map[string]blueprint.Kind{"summary": blueprint.KindString, "turns": blueprint.KindInt, "tokens": blueprint.KindInt}},
	"lint": {Name: "lint", Fields: map[string]blueprint.Field{
		"run": {Kind: blueprint.KindStringList, Required: true, NoTemplate: true},
	}, Outputs: map[string]blueprint.Kind{"diagnostics": blueprint.KindInt}},
	"diff_cap": {Name: "diff_cap", Fields: map[string]blueprint.Field{
		"max_lines": {Kind: blueprint.KindInt},
		"max_files": {Kind: blueprint.KindInt},
		"exclude":   {Kind: blueprint.KindStringList},
	}, Outputs: map[string]blueprint.Kind{"lines": blueprint.KindInt, "files": blueprint.KindInt}},
	"test": {Name: "test", Fields: map[string]blueprint.Field{
		"run": {Kind: blueprint.KindString, Required: true, NoTemplate: true},
	}, Outputs: map[string]blueprint.Kind{"passed": blueprint.KindInt, "failed": blueprint.KindInt, "skipped": blueprint.KindInt, "failures": blueprint.KindStringList}},
	"git_commit": {Name: "git_commit", Fields: map[string]blueprint.Field{
		"message": {Kind: blueprint.KindString},
		"branch":  {Kind: blueprint.KindString},
	}, Outputs: map[string]blueprint.Kind{"commit": blueprint.KindString, "branch": blueprint.KindString}},
	"review": {Name: "review", Fields: map[string]blueprint.Field{
		"queue": {Kind: blueprint.KindString, Enum: []string{"local", "github"}},
	}},
	"shell": {Name: "shell", Fields: map[string]blueprint.Field{
		"run": {Kind: blueprint.KindString, Required: true},
	}, Outputs: map[string]blueprint.Kind{"exit_code": blueprint.KindInt}},
}
