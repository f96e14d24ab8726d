// Command custom-gate registers a custom gate type (no_todo, gate.go) and
// runs one blueprint twice: a change that passes every gate and is
// committed, and one that adds a TODO and is refused, the run handed off
// naming the gate. main_test.go runs the runtimetest conformance suite
// against the gate type. It runs offline.
//
//	go run ./examples/custom-gate
package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	goruntime "runtime"

	"github.com/sandgate/sandgate/blueprint"
	"github.com/sandgate/sandgate/examples/internal/demorepo"
	"github.com/sandgate/sandgate/nodes"
	"github.com/sandgate/sandgate/runtime"
	"github.com/sandgate/sandgate/sandbox"
)

// fix makes Add add; fixWithTodo does too, and leaves a TODO behind.
const (
	fix = `--- a/calc.go
+++ b/calc.go
@@ -1,4 +1,4 @@
 package calc
 
 // Add returns the sum of a and b.
-func Add(a, b int) int { return a - b }
+func Add(a, b int) int { return a + b }
`
	fixWithTodo = `--- a/calc.go
+++ b/calc.go
@@ -1,4 +1,5 @@
 package calc
 
 // Add returns the sum of a and b.
-func Add(a, b int) int { return a - b }
+// TODO: check for overflow.
+func Add(a, b int) int { return a + b }
`
)

func main() {
	sandbox.Main()
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "custom-gate:", err)
		os.Exit(1)
	}
}

func run() error {
	reg := nodes.NewRegistry()
	if err := reg.Register(NoTodoType()); err != nil {
		return err
	}
	_, file, _, _ := goruntime.Caller(0)
	bp, err := reg.Load(filepath.Join(filepath.Dir(file), "blueprint.yaml"))
	if err != nil {
		return err
	}
	cases := []struct {
		name, patch string
		want        runtime.Status
	}{
		{"clean fix", fix, runtime.StatusSucceeded},
		{"fix with a TODO", fixWithTodo, runtime.StatusHandedOff},
	}
	for _, c := range cases {
		sum, err := runOnce(reg, bp, c.patch)
		if err != nil {
			return fmt.Errorf("%s: %w", c.name, err)
		}
		fmt.Printf("%-16s -> %s", c.name, sum.Status)
		if sum.Status == runtime.StatusHandedOff {
			fmt.Printf("\n  hand-off reason: %s", sum.Reason)
		}
		fmt.Println()
		if sum.Status != c.want {
			return fmt.Errorf("%s: want %s, got %s (%s)", c.name, c.want, sum.Status, sum.Reason)
		}
	}
	fmt.Println("ok: the gate let the clean change through and kept the TODO from leaving")
	return nil
}

// runOnce runs the blueprint on a fresh copy of the demo repository.
func runOnce(reg *runtime.Registry, bp *blueprint.Blueprint, patch string) (*runtime.Summary, error) {
	repo, err := demorepo.Create()
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(repo)
	rt := &runtime.Runtime{Registry: reg, RunsDir: filepath.Join(repo, ".runs"),
		Prepare: nodes.Environment(nodes.EnvOptions{Repo: repo, Caches: nodes.GoCaches()})}
	return rt.Run(context.Background(), bp, runtime.RunOptions{Workspace: repo, Inputs: map[string]any{"patch": patch}})
}
