package temporal

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/sandgate/sandgate/runtime"
)

// Exit codes of `sandgate run`, which sandgate-temporal run keeps.
const (
	ExitSucceeded = 0
	ExitFailed    = 1
	ExitUsage     = 2
	ExitHandedOff = 3
	ExitCanceled  = 130
)

// ExitCode maps a run's final status to the CLI's exit code.
func ExitCode(s runtime.Status) int {
	switch s {
	case runtime.StatusSucceeded:
		return ExitSucceeded
	case runtime.StatusHandedOff:
		return ExitHandedOff
	case runtime.StatusCanceled:
		return ExitCanceled
	}
	return ExitFailed
}

// Start starts a run's workflow on queue with id as the workflow (and run)
// id. The blueprint's name and the repository go to the memo, and to
// search attributes when in.SearchAttributes is set; the labels go to the
// memo.
func Start(ctx context.Context, c client.Client, queue, id, blueprintName string, in RunInput) (client.WorkflowRun, error) {
	opts := client.StartWorkflowOptions{ID: id, TaskQueue: queue,
		Memo: map[string]any{"blueprint": blueprintName, "repository": in.Repo, "status": string(runtime.StatusRunning)}}
	if len(in.Labels) > 0 {
		opts.Memo["labels"] = map[string]string(in.Labels)
	}
	if in.SearchAttributes {
		opts.TypedSearchAttributes = temporal.NewSearchAttributes(
			temporal.NewSearchAttributeKeyKeyword(AttrStatus).ValueSet(string(runtime.StatusRunning)),
			temporal.NewSearchAttributeKeyKeyword(AttrBlueprint).ValueSet(blueprintName),
			temporal.NewSearchAttributeKeyKeyword(AttrRepository).ValueSet(in.Repo))
	}
	return c.ExecuteWorkflow(ctx, opts, WorkflowName, in)
}

// Follow prints the run's events as they are journaled (polling the
// events query) until the workflow ends, and returns its final status.
// It queries and cancels the workflow's latest execution (run id ""), so
// it follows a run that continued as new.
// When ctx ends first the run is canceled (the kill switch) and Follow
// waits for its end.
func Follow(ctx context.Context, c client.Client, run client.WorkflowRun, out io.Writer, poll time.Duration) (Status, error) {
	done := make(chan error, 1)
	var st Status
	go func() { done <- run.Get(context.Background(), &st) }()
	seen, canceled := 0, false
	t := time.NewTicker(poll)
	defer t.Stop()
	for {
		select {
		case err := <-done:
			printNew(c, run, out, seen)
			return st, err
		case <-ctx.Done():
			if !canceled {
				canceled = true
				fmt.Fprintln(out, "canceling the run…")
				if err := c.CancelWorkflow(context.Background(), run.GetID(), ""); err != nil {
					return st, fmt.Errorf("cancel run %s: %w", run.GetID(), err)
				}
			}
			ctx = context.Background()
		case <-t.C:
			seen = printNew(c, run, out, seen)
		}
	}
}

// printNew prints the events after the first seen and returns the count.
func printNew(c client.Client, run client.WorkflowRun, out io.Writer, seen int) int {
	qctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	v, err := c.QueryWorkflow(qctx, run.GetID(), "", QueryEvents, seen)
	if err != nil {
		return seen
	}
	var events []runtime.Event
	if err := v.Get(&events); err != nil {
		return seen
	}
	for _, ev := range events {
		if line := EventLine(ev); line != "" {
			fmt.Fprintln(out, line)
		}
	}
	return seen + len(events)
}

// EventLine renders one event for a person watching the run.
func EventLine(ev runtime.Event) string {
	switch ev.Type {
	case runtime.EvNodeStarted:
		return fmt.Sprintf("▶ %s (attempt %d)", ev.Node, ev.Attempt)
	case runtime.EvNodeFinished:
		s := fmt.Sprintf("  %s#%d %s", ev.Node, ev.Attempt, orDefault(string(ev.Outcome), "broke"))
		if ev.Error != "" {
			s += ": " + ev.Error
		} else if ev.Reason != "" {
			s += ": " + ev.Reason
		}
		return s
	case runtime.EvEdgeTaken:
		return fmt.Sprintf("  → %s", ev.To)
	case runtime.EvAnswered:
		return fmt.Sprintf("answered by %s: continue at %s", ev.By, ev.Node)
	case runtime.EvRunFinished:
		return fmt.Sprintf("run %s: %s", ev.Status, ev.Reason)
	}
	return ""
}

// SendAnswer signals a handed-off run with a person's answer.
func SendAnswer(ctx context.Context, c client.Client, runID string, a Answer) error {
	if a.Node == "" {
		return errors.New("answer: name the node to continue with")
	}
	return c.SignalWorkflow(ctx, runID, "", SignalAnswer, a)
}

// QueryRun returns a run's status.
func QueryRun(ctx context.Context, c client.Client, runID string) (Status, error) {
	var st Status
	v, err := c.QueryWorkflow(ctx, runID, "", QueryStatus)
	if err != nil {
		return st, err
	}
	return st, v.Get(&st)
}
