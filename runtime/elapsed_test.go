package runtime_test

import (
	"context"
	"testing"
	"time"

	"github.com/sandgate/sandgate/blueprint"
	"github.com/sandgate/sandgate/runtime"
)

// TestElapsed: a run's duration counts its workspace set-ups (journaled
// after run_started, an answer or a resume, with their own duration) and
// leaves out the time it waited for an answer or lay dead before a resume.
func TestElapsed(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	events := []runtime.Event{
		{Type: runtime.EvRunStarted, Time: at(0)},
		{Type: runtime.EvEnvironment, Time: at(0), DurationMS: 20_000}, // set up before run_started
		{Type: runtime.EvNodeStarted, Time: at(1)},
		{Type: runtime.EvRunFinished, Time: at(10)},
		{Type: runtime.EvRunClosed, Time: at(11)},
		{Type: runtime.EvAnswered, Time: at(3600)}, // an hour waiting for a person
		{Type: runtime.EvEnvironment, Time: at(3600), DurationMS: 2_000},
		{Type: runtime.EvRunFinished, Time: at(3605)},
		{Type: runtime.EvRunResumed, Time: at(7200)}, // crashed, resumed an hour later
		{Type: runtime.EvEnvironment, Time: at(7200), DurationMS: 1_000},
		{Type: runtime.EvRunClosed, Time: at(7203)},
	}
	total, ws := runtime.Elapsed(events)
	// Working time 11 + 5 + 3 s, plus 23 s of set-ups.
	if total != 42*time.Second || ws != 23*time.Second {
		t.Fatalf("Elapsed = %s (workspace %s), want 42s (23s)", total, ws)
	}
	if total, ws := runtime.Elapsed(events[1:]); total != 0 || ws != 0 {
		t.Fatalf("a journal without run_started: %s %s", total, ws)
	}
}

// TestSummaryCountsWorkspace: the workspace set-up, which runs before
// run_started, is part of the run's duration and shown on its own.
func TestSummaryCountsWorkspace(t *testing.T) {
	f := newFixture(t, retryLoop("[pass]", ""))
	const setup = 30 * time.Millisecond
	f.rt.Prepare = func(ctx context.Context, dir string, bp *blueprint.Blueprint, resume bool) (*runtime.Environment, error) {
		time.Sleep(setup) // at least this long, however loaded the machine
		return &runtime.Environment{}, nil
	}
	sum := f.run(t, t.Context(), map[string]any{"task": "x"})
	if sum.WorkspaceMS < setup.Milliseconds() || sum.DurationMS < sum.WorkspaceMS {
		t.Fatalf("workspace %d ms, duration %d ms: the %s set-up is not counted", sum.WorkspaceMS, sum.DurationMS, setup)
	}
}
