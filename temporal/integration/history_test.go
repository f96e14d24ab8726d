package integration

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/sandgate/sandgate/runtime"
	"github.com/sandgate/sandgate/temporal"
)

var update = flag.Bool("update", false, "record the golden workflow histories into ../testdata/histories")

// goldenVersion prefixes the histories this version of the workflow
// records; the replay test replays every version's, so a change that
// would break runs in flight fails CI.
const goldenVersion = "v1"

// continueCases are runs that cross the continue-as-new boundary several
// times with a low bound: a retry loop, answers to repeated hand-offs,
// and two parallel branches (which must drain before the run continues).
var continueCases = []struct {
	name, src string
	answers   int
}{
	{"retries", loopBlueprint(12), 0},
	{"answers", "version: 1\nname: ask\nbudget: {answers: 5}\nstart: work\nnodes:\n" +
		"  work: {type: step, next: gate}\n" +
		"  gate: {type: step, outcomes: [handoff, handoff, handoff, pass], on_pass: done, on_fail: done}\n" +
		"  done: {type: succeed}\n", 3},
	{"parallel", parallelBlueprint(5), 0},
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
			if short.Status != runtime.StatusSucceeded || short.Status != long.Status || short.NodeRuns != long.NodeRuns || short.Answers != long.Answers {
				t.Fatalf("with continue-as-new %+v, without %+v", short, long)
			}
			if a, b := journalShape(t, short.Dir), journalShape(t, long.Dir); !reflect.DeepEqual(a, b) {
				t.Fatalf("journals differ:\nwith continue-as-new %v\nwithout %v", a, b)
			}
			if *update {
				for i, h := range histories {
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

// journalShape is the journal without times, run ids and durations.
func journalShape(t *testing.T, dir string) []string {
	t.Helper()
	events, err := runtime.ReadJournal(filepath.Join(dir, "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, ev := range events {
		out = append(out, fmt.Sprintf("%d %s %s#%d %s %s→%s %s %s", ev.Seq, ev.Type, ev.Node, ev.Attempt, ev.Outcome, ev.Edge, ev.To, ev.Status, ev.Kind))
	}
	return out
}

// executions returns the history of every execution of a run, following
// its continue-as-new chain from the first.
func executions(t *testing.T, c client.Client, wr client.WorkflowRun) []*historypb.History {
	t.Helper()
	var out []*historypb.History
	for runID := wr.GetRunID(); runID != ""; {
		h := history(t, c, wr.GetID(), runID)
		out = append(out, h)
		runID = ""
		if last := h.Events[len(h.Events)-1]; last.GetEventType() == enums.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW {
			runID = last.GetWorkflowExecutionContinuedAsNewEventAttributes().GetNewExecutionRunId()
		}
	}
	return out
}

func history(t *testing.T, c client.Client, id, runID string) *historypb.History {
	t.Helper()
	it := c.GetWorkflowHistory(context.Background(), id, runID, false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	h := &historypb.History{}
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		h.Events = append(h.Events, ev)
	}
	return h
}

func writeHistory(t *testing.T, h *historypb.History, path string) {
	t.Helper()
	b, err := protojson.MarshalOptions{Indent: "  "}.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
