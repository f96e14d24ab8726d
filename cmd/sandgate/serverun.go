package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/sandgate/sandgate/blueprints"
	"github.com/sandgate/sandgate/runtime"
)

// Rerun starts a new run like the one in runDir: its saved blueprint,
// its inputs (as journaled, defaults included) and its repository, in the
// same runs directory, with its labels. The inbox journals who asked.
func (a *serveActions) Rerun(ctx context.Context, runDir, by string) (string, error) {
	sum, err := runtime.Summarize(runDir)
	if err != nil {
		return "", err
	}
	src, err := os.ReadFile(filepath.Join(runDir, "blueprint.yaml"))
	if err != nil {
		return "", fmt.Errorf("the run's blueprint: %w", err)
	}
	bp, err := (&runFlags{}).registry().Parse(filepath.Join(runDir, "blueprint.yaml"), src)
	if err != nil {
		return "", loadProblems(err)
	}
	in := startIn{Repo: sum.Workspace, Inputs: map[string]string{}, Labels: sum.Labels}
	for k, v := range sum.Inputs {
		if s, ok := v.(string); ok {
			in.Inputs[k] = s
			continue
		}
		b, _ := json.Marshal(v)
		in.Inputs[k] = string(b)
	}
	args, _, err := startArgs(in, bp, a.answerArgs)
	if err != nil {
		return "", err
	}
	out, err := a.launch(ctx, filepath.Dir(runDir), "blueprint.yaml", src, append(args, "--runs-dir="+filepath.Dir(runDir)))
	return out.RunDir, err
}

// Resume continues an interrupted run with `sandgate resume`, as a child
// that outlives the request, and returns once it has journaled the resume.
func (a *serveActions) Resume(ctx context.Context, runDir, by string) error {
	return a.carryOn(ctx, runDir, append(append([]string{"resume"}, a.answerArgs...), "--", runDir), "run_resumed")
}

// startable are the blueprints Start runs and the inbox lists.
func (a *serveActions) startable() fs.FS {
	if a.blueprints == nil {
		return blueprints.FS
	}
	return a.blueprints
}

// Start runs the blueprint name (a --blueprints-dir one, else a shipped
// one) on the server's repository (its working directory, as MCP's
// start_run), in runsDir; the child runs a copy kept in the run
// directory. The inputs were checked by the inbox and are checked again
// here, as run's flags.
func (a *serveActions) Start(ctx context.Context, name string, inputs, labels map[string]string, runsDir, by string) (string, error) {
	return a.startNamed(ctx, startIn{Blueprint: name, Inputs: inputs, Labels: labels}, runsDir)
}

// startNamed starts in.Blueprint, a name from the set the inbox lists,
// on in.Repo (empty: the server's) in runsDir.
func (a *serveActions) startNamed(ctx context.Context, in startIn, runsDir string) (string, error) {
	name := in.Blueprint
	// Read from the set the inbox lists only: a file of that name in
	// the server's directory is not what the person picked.
	if name == "" || strings.ContainsAny(name, `/\.`) {
		return "", fmt.Errorf("%q is not a blueprint the inbox lists", name)
	}
	src, err := fs.ReadFile(a.startable(), name+".yaml")
	if err != nil {
		return "", fmt.Errorf("%q is not a blueprint the inbox lists: %w", name, err)
	}
	bp, err := (&runFlags{}).registry().Parse(name+".yaml", src)
	if err != nil {
		return "", loadProblems(err)
	}
	args, _, err := startArgs(in, bp, a.answerArgs)
	if err != nil {
		return "", err
	}
	out, err := a.launch(ctx, runsDir, name+".yaml", src, append(args, "--runs-dir="+runsDir))
	return out.RunDir, err
}
