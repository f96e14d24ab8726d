package runtime

import (
	"context"

	"github.com/sandgate/sandgate/blueprint"
)

// Environment is what one run's nodes work in.
type Environment struct {
	// Workspace is the directory nodes see as Input.Workspace.
	Workspace string
	// Services are merged over Runtime.Services for this run.
	Services Services
	// Patch returns the change so far as a patch `git apply` takes,
	// binary files included (git diff --binary); a handed-off run saves
	// it as change.patch.
	Patch func() ([]byte, error)
	// Diff returns the change so far as text; a hand-off uses it when
	// Patch is nil.
	Diff func() (string, error)
	// Apply writes a patch (as Patch returns it) into a fresh workspace:
	// a durable engine rebuilds a run on another host from the base and
	// the change its harness recorded. Nil: the run cannot move.
	Apply func(patch []byte) error
	// Records returns what the harness recorded in the run directory that
	// the nodes after a move need besides the change (verdicts, the
	// commit, the push), as one value; Restore writes it back into a run
	// moved to this host, after Apply. Nil: nothing beyond the change.
	Records func() ([]byte, error)
	Restore func(records []byte) error
	// Layers describes the isolation in force, recorded in the trace.
	Layers []string
	// Close tears the environment down when the run ends.
	Close func() error
	// Discard, when set, runs after Close once the run has finished for
	// good; it removes state only a resume would need (the sandbox's disk
	// image). A run that aborts keeps that state, and so does a run handed
	// off while budget.answers allows an answer, which continues on it.
	Discard func() error
}

// Prepare builds a run's environment. runDir is the run's directory; the
// environment may keep state there so a resumed run finds it again.
type Prepare func(ctx context.Context, runDir string, bp *blueprint.Blueprint, resume bool) (*Environment, error)

type inputsKey struct{}

// RunInputs are the inputs (defaults filled in) of the run whose
// environment ctx prepares: the Prepare hook's context carries them, so an
// environment can size what it sets up to the task (the packages a warm
// build compiles). It is nil in any other context.
func RunInputs(ctx context.Context) map[string]any {
	m, _ := ctx.Value(inputsKey{}).(map[string]any)
	return m
}
