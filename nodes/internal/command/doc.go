// Package command is a node's run: key as the harness executes it: a
// shell command line run by sh -c, or an argv (blueprint.Argv) executed
// directly, no shell, whose templated items each render to exactly one
// argument; and the shell quoter the harness's own scripts use.
//
// It imports only blueprint and runtime (for rendering templates); the
// node packages use it, and it must never import one of them.
package command
