package integration

import (
	"context"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"

	"github.com/sandgate/sandgate/runtime"
	"github.com/sandgate/sandgate/temporal"
)

// continueCases are runs that cross the continue-as-new boundary several
// times with a low bound: a retry loop, answers to repeated hand-offs,
// and two parallel branches (which must drain before the run continues).
var continueCases = []struct {
	name, src string
	answers   int
	// parallel: the branches' attempts interleave as their activities
	// happen to finish, with or without continue-as-new; the journals
	// are compared as sets of events then.
	parallel bool
}{
	{"retries", loopBlueprint(12), 0, false},
	{"answers", "version: 1\nname: ask\nbudget: {answers: 5}\nstart: work\nnodes:\n" +
		"  work: {type: step, next: gate}\n" +
		"  gate: {type: step, outcomes: [handoff, handoff, handoff, pass], on_pass: done, on_fail: done}\n" +
		"  done: {type: succeed}\n", 3, false},
	{"parallel", parallelBlueprint(5), 0, true},
}

// loopBlueprint fails its gate fails times, then passes.
func loopBlueprint(fails int) string {
	outcomes := strings.Repeat("fail, ", fails) + "pass"
	return fmt.Sprintf("version: 1\nname: loop\nstart: work\nnodes:\n"+
		"  work: {type: step, next: gate}\n"+
		"  gate: {type: step, outcomes: [%s], on_pass: done, on_fail: {to: work, max: %d}}\n"+
		"  done: {type: succeed}\n", outcomes, fails)
}

// parallelBlueprint forks into two chains of n steps that join.
func parallelBlueprint(n int) string {
	s := "version: 1\nname: pair\nstart: fork\nnodes:\n  fork: {type: step, next: [a1, b1]}\n"
	for _, br := range []string{"a", "b"} {
		for i := 1; i <= n; i++ {
			next := fmt.Sprintf("%s%d", br, i+1)
			if i == n {
				next = "join"
			}
			s += fmt.Sprintf("  %s%d: {type: step, next: %s}\n", br, i, next)
		}
	}
	return s + fmt.Sprintf("  join: {type: step, needs: [a%d, b%d], next: done}\n  done: {type: succeed}\n", n, n)
}

// TestContinueAsNew runs each case twice, with a bound of 20 history
// events and with the default: the first must continue as new at least
// three times and end with the same result and the same journal
// (decisions, nodes, attempts, outcomes) as the second.
func TestContinueAsNew(t *testing.T) {
	c := dial(t)
	startHost(t, c, "can", "host-can", false)
	for _, tc := range continueCases {
		t.Run(tc.name, func(t *testing.T) {
			short, shortRun := continueRun(t, c, tc.src, tc.answers, 20)
			long, _ := continueRun(t, c, tc.src, tc.answers, 0)
			histories := executions(t, c, shortRun)
			if len(histories) < 4 {
				t.Fatalf("the run continued as new %d times, want at least 3", len(histories)-1)
			}
			t.Logf("%d executions, %d node attempts", len(histories), short.NodeRuns)
			if short.Status != runtime.StatusSucceeded || short.Status != long.Status || short.NodeRuns != long.NodeRuns || short.Answers != long.Answers {
				t.Fatalf("with continue-as-new %+v, without %+v", short, long)
			}
			if a, b := journalShape(t, short.Dir, tc.parallel), journalShape(t, long.Dir, tc.parallel); !reflect.DeepEqual(a, b) {
				t.Fatalf("journals differ:\nwith continue-as-new %v\nwithout %v", a, b)
			}
			if *update {
				// The first two executions cross the boundary (the second
				// starts from the carried journal), the last ends the run.
				for i, h := range histories {
					if i >= 2 && i < len(histories)-1 {
						continue
					}
					writeHistory(t, h, filepath.Join("..", "testdata", "histories", fmt.Sprintf("%s-continue-%s-%d.json", goldenVersion, tc.name, i+1)))
				}
			}
		})
	}
}

// continueRun runs src with the history bound given (0: the default),
// answering each hand-off at the gate up to answers times.
func continueRun(t *testing.T, c client.Client, src string, answers, bound int) (temporal.Status, client.WorkflowRun) {
	t.Helper()
	wr := start(t, c, "can", src, temporal.RunInput{Repo: t.TempDir(), ContinueAfter: bound})
	for i := 1; i <= answers; i++ {
		waitFor(t, c, wr, "waiting for an answer", func(s temporal.Status) bool { return s.Waiting && s.Answers == i-1 })
		if err := temporal.SendAnswer(context.Background(), c, wr.GetID(), temporal.Answer{Node: "gate", Note: "go on", By: "ann"}); err != nil {
			t.Fatal(err)
		}
	}
	return result(t, wr), wr
}

// journalShape is the journal without times, run ids and durations;
// unordered, it is also without sequence numbers, sorted.
func journalShape(t *testing.T, dir string, unordered bool) []string {
	t.Helper()
	var out []string
	for _, ev := range journal(t, dir) {
		line := fmt.Sprintf("%s %s#%d %s %s→%s %s %s", ev.Type, ev.Node, ev.Attempt, ev.Outcome, ev.Edge, ev.To, ev.Status, ev.Kind)
		if !unordered {
			line = fmt.Sprintf("%d %s", ev.Seq, line)
		}
		out = append(out, line)
	}
	if unordered {
		slices.Sort(out)
	}
	return out
}

// executions returns the history of every execution of a run, following
// its continue-as-new chain from the first.
func executions(t *testing.T, c client.Client, wr client.WorkflowRun) []*historypb.History {
	t.Helper()
	var out []*historypb.History
	// Not wr.GetRunID(): once Get has followed the chain it names the
	// last execution, and the chain read from there is one execution long
	// (what made an earlier version of this test see 0 continuations).
	first := wr.GetFirstExecutionRunID()
	if v, ok := firstRuns.Load(wr.GetID()); first == "" && ok {
		first = v.(string)
	}
	if first == "" {
		t.Fatalf("run %s: its first execution's run id is unknown", wr.GetID())
	}
	for runID := first; runID != ""; {
		h := history(t, c, wr.GetID(), runID)
		out = append(out, h)
		runID = ""
		if last := h.Events[len(h.Events)-1]; last.GetEventType() == enums.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW {
			runID = last.GetWorkflowExecutionContinuedAsNewEventAttributes().GetNewExecutionRunId()
		}
	}
	return out
}

// TestContinueAsNewLargeJournal: a run whose journal outgrows what one
// payload carries (Temporal refuses payloads over 2 MB; before the bound
// the workflow task failed over and over and the run hung) continues as
// new while it fits, then is handed off saying why.
func TestContinueAsNewLargeJournal(t *testing.T) {
	c := dial(t)
	startHost(t, c, "can-big", "host-big", false)
	// Each failed gate journals 64 KiB of feedback (runtime.MaxFeedback).
	src := strings.Replace(loopBlueprint(30), "gate: {type: step,", "gate: {type: step, feedback_bytes: 70000,", 1)
	wr := start(t, c, "can-big", src, temporal.RunInput{Repo: t.TempDir(), ContinueAfter: 100, HandoffWait: time.Second})
	st := result(t, wr)
	hs := executions(t, c, wr)
	if len(hs) < 2 || st.Status != runtime.StatusHandedOff || st.Kind != "journal_size" || !strings.Contains(st.Reason, "too large to carry into a continue-as-new") {
		t.Fatalf("after %d executions: %+v, want a hand-off: too large to carry", len(hs), st)
	}
	events, err := runtime.ReadJournal(filepath.Join(st.Dir, "events.jsonl"))
	if err != nil || events[len(events)-1].Type != runtime.EvRunClosed {
		t.Fatalf("the run's record is not closed (%v)", err)
	}
	t.Logf("%d executions, %d node attempts: %s", len(hs), st.NodeRuns, st.Reason)
}
