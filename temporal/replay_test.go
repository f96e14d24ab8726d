package temporal

import (
	"testing"

	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/sandgate/sandgate/nodes"
)

// TestReplayRecordedHistory replays the history of a real run (the
// integration module's shell blueprint on the test server, recorded with
// SANDGATE_RECORD_HISTORY=$PWD/testdata/shell-history.json) through the
// workflow as it is now. A change to the workflow or the scheduler that
// would make running workflows take other decisions fails here.
func TestReplayRecordedHistory(t *testing.T) {
	r := worker.NewWorkflowReplayer()
	r.RegisterWorkflowWithOptions((&Workflows{Registry: nodes.NewRegistry()}).Run, workflow.RegisterOptions{Name: WorkflowName})
	if err := r.ReplayWorkflowHistoryFromJSONFile(nil, "testdata/shell-history.json"); err != nil {
		t.Fatal(err)
	}
}
