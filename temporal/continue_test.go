package temporal

import (
	"errors"
	"testing"

	"go.temporal.io/sdk/workflow"
)

// TestWorkflowContinuesAsNew: with its history past the bound, a run
// holds its next attempt and continues as new carrying the journal and
// the held attempt.
func TestWorkflowContinuesAsNew(t *testing.T) {
	f := newFixture(t)
	f.env.SetCurrentHistoryLength(100)
	f.env.ExecuteWorkflow(WorkflowName, RunInput{File: "bp.yaml", Source: []byte(loopBP("[fail, pass]")), Repo: f.ws, ContinueAfter: 50})
	var can *workflow.ContinueAsNewError
	if err := f.env.GetWorkflowError(); !errors.As(err, &can) {
		t.Fatalf("workflow ended with %v, want a continue-as-new", err)
	}
}
