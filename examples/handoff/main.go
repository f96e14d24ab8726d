// Command handoff reacts to a hand-off in code: an observer pages as soon
// as the run is handed to a person, and the program reads handoff.json to
// route the work (here it prints the ticket it would file).
//
//	go run ./examples/handoff
package main

import (
	"context"
	"encoding/json"
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
		fmt.Fprintln(os.Stderr, "handoff:", err)
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
	_, file, _, _ := goruntime.Caller(0)
	bp, err := reg.Load(filepath.Join(filepath.Dir(file), "blueprint.yaml"))
	if err != nil {
		return err
	}
	rt := &runtime.Runtime{Registry: reg, RunsDir: filepath.Join(repo, ".runs"),
		Prepare: nodes.Environment(nodes.EnvOptions{Repo: repo, Caches: nodes.GoCaches()}),
		Observer: runtime.ObserverFunc(func(ev runtime.Event) {
			if ev.Type == runtime.EvRunFinished && ev.Status == runtime.StatusHandedOff {
				fmt.Printf("PAGE on-call: run handed off (%s): %s\n", ev.Kind, ev.Reason)
			}
		})}
	sum, err := rt.Run(context.Background(), bp, runtime.RunOptions{Workspace: repo})
	if err != nil {
		return err
	}
	if sum.Status != runtime.StatusHandedOff {
		return fmt.Errorf("expected a hand-off, got %s", sum.Status)
	}
	b, err := os.ReadFile(filepath.Join(sum.Dir, "handoff.json"))
	if err != nil {
		return err
	}
	var h runtime.Handoff
	if err := json.Unmarshal(b, &h); err != nil {
		return err
	}
	fmt.Printf("ticket: %q\n  attempts: %d\n  last feedback from %s:\n%s\n  details: %s\n",
		h.Reason, len(h.Attempts), h.FeedbackFrom, h.LastFeedback, filepath.Join(sum.Dir, "handoff.md"))
	return nil
}
