package blueprint_test

import (
	"errors"
	"fmt"

	"github.com/sandgate/sandgate/blueprint"
)

var exampleTypes = blueprint.MapTypes{
	"shell": {Name: "shell",
		Fields:  map[string]blueprint.Field{"run": {Kind: blueprint.KindString, Required: true}},
		Outputs: map[string]blueprint.Kind{"exit_code": blueprint.KindInt}},
}

func ExampleParse() {
	src := []byte(`version: 1
name: check
start: build
nodes:
  build:
    type: shell
    run: go build ./...
    on_pass: done
    on_fail: {to: build, max: 2}
  done: {type: succeed}
`)
	bp, err := blueprint.Parse("check.yaml", src, blueprint.WithTypes(exampleTypes))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(bp.Name, bp.Start, bp.WorstCaseRuns)
	// Output: check build 6
}

func ExampleDiagnostics() {
	src := []byte(`version: 1
name: check
start: build
nodes:
  build: {type: shel, run: make, next: dnoe}
`)
	_, err := blueprint.Parse("check.yaml", src, blueprint.WithTypes(exampleTypes))
	var ds blueprint.Diagnostics
	if errors.As(err, &ds) {
		fmt.Println(ds.Pretty())
	}
	// Output:
	// check.yaml:5:17: nodes.build.type: unknown node type "shel" (did you mean "shell"?)
	//       build: {type: shel, run: make, next: dnoe}
	//                     ^
	// check.yaml:5:40: nodes.build.next: unknown node "dnoe"
	//       build: {type: shel, run: make, next: dnoe}
	//                                            ^
}

func ExampleLoad() {
	bp, err := blueprint.Load("testdata/valid/issue-example.yaml", blueprint.WithTypes(testTypes))
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, e := range bp.Nodes["lint"].Edges {
		fmt.Println(e)
	}
	// Output:
	// lint.on_pass → diff_cap
	// lint.on_fail → implement (max 3)
}

func ExampleExpr_Eval() {
	bp, _ := blueprint.Load("testdata/valid/issue-example.yaml", blueprint.WithTypes(testTypes))
	when := bp.Nodes["test"].Edges[0].When
	ok, _ := when.Eval(&blueprint.Scope{Outputs: map[string]map[string]any{"test": {"failed": 0}}})
	fmt.Println(when.Source, "→", ok)
	// Output: outputs.test.failed == 0 → true
}

func ExampleTemplate_Render() {
	bp, _ := blueprint.Load("testdata/valid/issue-example.yaml", blueprint.WithTypes(testTypes))
	msg, _ := bp.Nodes["commit"].Templates["message"].Render(&blueprint.Scope{Inputs: map[string]any{"task": "Add subtracts"}})
	fmt.Println(msg)
	// Output: fix: Add subtracts
}

func ExampleBlueprint_Mermaid() {
	src := []byte("version: 1\nname: t\nstart: a\nnodes:\n  a: {type: shell, run: x, on_pass: ok, on_fail: {to: a, max: 1}}\n  ok: {type: succeed}\n")
	bp, _ := blueprint.Parse("t.yaml", src, blueprint.WithTypes(exampleTypes))
	fmt.Print(bp.Mermaid())
	// Output:
	// flowchart TD
	//   a["a<br/><i>shell</i>"]
	//   ok(["ok<br/><i>succeed</i>"]):::succeed
	//   a -->|"pass"| ok
	//   a -.->|"fail, max 1"| a
	//   classDef succeed fill:#d4f7d4,stroke:#2e7d32
	//   classDef handoff fill:#ffe0b2,stroke:#ef6c00
	//   classDef fail fill:#ffcdd2,stroke:#c62828
}

func ExampleJSONSchema() {
	schema := blueprint.JSONSchema(exampleTypes)
	fmt.Println(len(schema) > 0)
	// Output: true
}
