package temporal

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/sandgate/sandgate/nodes"
	"github.com/sandgate/sandgate/runtime"
	"github.com/sandgate/sandgate/temporal/internal/testnodes"
)

// TestReplayRecordedHistories replays the histories of real runs on the
// test server through the workflow as it is now. Each version of the
// workflow records its own (`cd integration && go test -run
// TestShellBlueprintEndToEnd -update` writes the
// current version's, named by its prefix); older versions' files stay, so
// a change to the workflow or the scheduler that would make runs in
// flight take other decisions fails here. v0 is the workflow before
// continue-as-new; v1 has it: its shell run is too short to cross the
// bound, its continue-* runs (integration TestContinueAsNew -update) keep
// the first two executions of a continued run, the second started from
// the first's carried journal, and the last.
func TestReplayRecordedHistories(t *testing.T) {
	files, _ := filepath.Glob("testdata/histories/*.json")
	if len(files) < 2 {
		t.Fatalf("want the recorded histories of two versions, found %v", files)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			// The shell runs use the built-in nodes, the rest the test steps.
			reg := testnodes.Registry()
			if strings.Contains(f, "shell") {
				reg = nodes.NewRegistry()
			}
			if err := replayer(reg).ReplayWorkflowHistoryFromJSONFile(nil, f); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestRecordedHistoriesCrossTheBoundary: the continue-* histories the
// replay test replays do cross it (the first execution ends continued as
// new, the second starts with a carried journal), so the replay covers
// both sides.
func TestRecordedHistoriesCrossTheBoundary(t *testing.T) {
	firsts, _ := filepath.Glob("testdata/histories/*-continue-*-1.json")
	if len(firsts) == 0 {
		t.Fatal("no recorded continue-as-new histories")
	}
	for _, f := range firsts {
		first, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		second, err := os.ReadFile(strings.TrimSuffix(f, "1.json") + "2.json")
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(first), "EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW") || !strings.Contains(string(second), `"continuedExecutionRunId"`) {
			t.Fatalf("%s and its successor do not cross the continue-as-new boundary", f)
		}
	}
}

func replayer(reg *runtime.Registry) worker.WorkflowReplayer {
	r := worker.NewWorkflowReplayer()
	r.RegisterWorkflowWithOptions((&Workflows{Registry: reg}).Run, workflow.RegisterOptions{Name: WorkflowName})
	return r
}
