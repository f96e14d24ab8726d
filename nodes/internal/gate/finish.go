package gate

import (
	"context"
	"time"

	"github.com/sandgate/sandgate/nodes/verdict"
	"github.com/sandgate/sandgate/nodes/workspace"
	"github.com/sandgate/sandgate/runtime"
)

// Finish finishes a gate node: it records the result as the node's verdict,
// writes the attempt's verify.json and sets the outcome. name is the kind
// the run's summary aggregates it under.
// fp is the change's fingerprint taken before the gate ran: the verdict
// vouches for what the gate saw. The gate runs on a quiesced box
// (quietNode), which also checks that nothing changed until it ended.
func Finish(in *runtime.Input, name, fp string, start time.Time, r verdict.GateResult, res *runtime.Result) (*runtime.Result, error) {
	r.Node, r.Kind, r.DurationMS, r.Fingerprint = in.NodeID, name, time.Since(start).Milliseconds(), fp
	l, err := LedgerOf(in)
	if err != nil {
		return nil, err
	}
	if err := l.recordAttempt(in, r); err != nil {
		return nil, err
	}
	res.Artifacts = append(res.Artifacts, "verify.json")
	res.Outcome = runtime.OutcomeFail
	if r.Pass {
		res.Outcome = runtime.OutcomePass
	}
	return res, nil
}

// Begin is how every gate starts: find the workspace and fingerprint
// the change before judging it.
func Begin(in *runtime.Input) (*workspace.Workspace, string, time.Time, error) {
	w, err := workspace.Of(in)
	if err != nil {
		return nil, "", time.Time{}, err
	}
	fp, err := w.Fingerprint()
	return w, fp, time.Now(), err
}

// Rebase moves the running gate's baseline to the workspace as it is
// now: the harness changed it (protect's action: revert), not the gate's
// command, so that is no write during the gate. Outside a gate it does
// nothing.
func Rebase(ctx context.Context) error {
	if s, ok := ctx.Value(sessionKey{}).(*session); ok {
		return s.rebase()
	}
	return nil
}
