// Command embed shows how another harness embeds sandgate: it owns the
// registry, builds the runtime with a sandboxed environment, watches
// progress through an observer and log/slog, and acts on the verdict.
//
//	go run ./examples/embed
package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	goruntime "runtime"

	"github.com/sandgate/sandgate/examples/internal/demorepo"
	"github.com/sandgate/sandgate/nodes"
	"github.com/sandgate/sandgate/runtime"
	"github.com/sandgate/sandgate/sandbox"
)

func main() {
	sandbox.Main() // the sandbox re-executes this binary; must come first
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "embed:", err)
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
	bp, err := reg.Load(here("blueprint.yaml"))
	if err != nil {
		return err
	}
	rt := &runtime.Runtime{
		Registry: reg,
		RunsDir:  filepath.Join(repo, ".runs"),
		Prepare:  nodes.Environment(nodes.EnvOptions{Repo: repo, Caches: nodes.GoCaches()}),
		Logger:   slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
		Observer: runtime.ObserverFunc(func(ev runtime.Event) {
			if ev.Type == runtime.EvNodeFinished {
				fmt.Printf("node %-10s attempt %d: %s\n", ev.Node, ev.Attempt, ev.Outcome)
			}
		}),
	}
	sum, err := rt.Run(context.Background(), bp, runtime.RunOptions{Workspace: repo, Inputs: map[string]any{"task": "Add must add"}})
	if err != nil {
		return err
	}
	fmt.Printf("status %s after %d node runs, %d tokens (%s)\n", sum.Status, sum.NodeRuns, sum.Tokens, sum.Reason)
	if sum.Status != runtime.StatusSucceeded {
		return fmt.Errorf("run ended %s", sum.Status)
	}
	return nil
}

// here resolves a file beside this example's source.
func here(name string) string {
	_, file, _, _ := goruntime.Caller(0)
	return filepath.Join(filepath.Dir(file), name)
}
