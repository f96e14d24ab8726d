package temporal

import (
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
// continue-as-new; v1 has it (its shell run is too short to cross the bound).
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

func replayer(reg *runtime.Registry) worker.WorkflowReplayer {
	r := worker.NewWorkflowReplayer()
	r.RegisterWorkflowWithOptions((&Workflows{Registry: reg}).Run, workflow.RegisterOptions{Name: WorkflowName})
	return r
}
