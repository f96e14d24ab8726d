package temporal

import (
	"errors"
	"fmt"

	"go.temporal.io/sdk/temporal"

	"github.com/sandgate/sandgate/runtime"
)

// versionDiverged names the change that brought the check: runs started
// before it (no marker in their history) never ask for it, so their
// histories never hold a refusal their code did not handle.
const versionDiverged = "rebuild-diverged-workspace"

// errDiverged is the error type of a node activity that refused to run on
// a workspace unlike the workflow's record; the workflow rebuilds the run
// from the record then, as for a lost host (movewf.go).
const errDiverged = "WorkspaceDiverged"

// checkRecorded compares the workspace of a run a killed or cut-off
// attempt may have written to (reopened from disk after a restart, or
// retried) with the change the workflow recorded last (in.Have; none: the
// base). Whatever that attempt left is never trusted: a workspace that
// differs, or whose change cannot be read, is refused, and the workflow
// rebuilds it from the base and the recorded change, fingerprint checked.
//
// A workspace that matches runs as it is. So does one the record cannot
// vouch for: an environment without Patch/Apply (such a run cannot move
// either), a run whose latest change was too large to record, or a run
// started before the check came in (in.Check false for both).
func checkRecorded(host string, r *runtime.Remote, in nodeInput) error {
	if !in.Check {
		return nil
	}
	patch, err := r.Change()
	if errors.Is(err, runtime.ErrNoRebuild) {
		return nil
	}
	want := in.Have
	if want == "" {
		want = fingerprint(nil)
	}
	var why string
	switch {
	case err != nil:
		why = fmt.Sprintf("its change cannot be read (%v)", err)
	case fingerprint(patch) != want:
		why = fmt.Sprintf("its change %s differs from the recorded %s: a cut-off attempt wrote to it", fingerprint(patch), want)
	default:
		return nil
	}
	return temporal.NewNonRetryableApplicationError(
		fmt.Sprintf("the workspace of run %s on host %s is not the recorded one: %s", in.RunID, host, why), errDiverged, nil)
}

// diverged reports whether a node activity refused its workspace.
func diverged(err error) bool {
	var ae *temporal.ApplicationError
	return errors.As(err, &ae) && ae.Type() == errDiverged
}
