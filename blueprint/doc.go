// Package blueprint defines sandgate's workflow format: a YAML file that
// declares deterministic nodes and agent nodes joined by edges, some of them
// bounded retry edges, plus run-wide budgets and sandbox settings.
//
// The package parses a blueprint, validates it completely before anything
// runs, and reports every problem it finds as a positioned [Diagnostic]
// ("file:line:col: field.path: message", with the source line and a caret).
// It compiles edge conditions and string templates with expr-lang against a
// typed environment, so a reference to an unknown node, input or output field
// is a load-time error rather than a surprise mid-run.
//
// The package knows nothing about how nodes execute. Node types are described
// to it through a [TypeSet] (the runtime's registry implements one): each type
// declares its configuration fields and its output fields, and may add its own
// checks through [NodeType.Check]. Only the terminal types succeed, handoff and
// fail are built in.
//
// A type can declare its configuration once, as a tagged Go struct:
// [Configured] derives the fields (and so validation, the JSON Schema and
// docs) from the tags and turns a [Validator] into the Check hook, and the
// factory reads the node with [Decode], getting the struct with defaults
// applied instead of a map re-read by key.
package blueprint
