// Command custom-node registers a custom node type beside the built-in
// ones and runs a blueprint that uses both. main_test.go runs the
// runtimetest conformance suite against the type.
//
//	go run ./examples/custom-node
package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	goruntime "runtime"

	"github.com/sandgate/sandgate/examples/internal/demorepo"
	"github.com/sandgate/sandgate/nodes"
	"github.com/sandgate/sandgate/runtime"
	"github.com/sandgate/sandgate/sandbox"
)

func main() {
	sandbox.Main()
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "custom-node:", err)
		os.Exit(1)
	}
}

func run() error {
	repo, err := demorepo.Create()
	if err != nil {
		return err
	}
	defer os.RemoveAll(repo)
	reg := nodes.NewRegistry()
	if err := reg.Register(TicketType()); err != nil {
		return err
	}
	_, file, _, _ := goruntime.Caller(0)
	bp, err := reg.Load(filepath.Join(filepath.Dir(file), "blueprint.yaml"))
	if err != nil {
		return err
	}
	// The ticket queue is relative to the working directory.
	if err := os.Chdir(repo); err != nil {
		return err
	}
	rt := &runtime.Runtime{Registry: reg, RunsDir: ".runs", Prepare: nodes.Environment(nodes.EnvOptions{Repo: repo, Caches: nodes.GoCaches()})}
	sum, err := rt.Run(context.Background(), bp, runtime.RunOptions{Workspace: repo})
	if err != nil {
		return err
	}
	tickets, _ := filepath.Glob(filepath.Join(repo, "tickets", "*.json"))
	fmt.Printf("status %s (%s); tickets filed: %d\n", sum.Status, sum.Reason, len(tickets))
	for _, t := range tickets {
		b, _ := os.ReadFile(t)
		fmt.Printf("%s\n", b)
	}
	if len(tickets) != 1 {
		return fmt.Errorf("want one ticket, got %d", len(tickets))
	}
	return nil
}
