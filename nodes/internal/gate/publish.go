package gate

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/sandgate/sandgate/blueprint"
	"github.com/sandgate/sandgate/nodes/verdict"
	"github.com/sandgate/sandgate/runtime"
)

// Any node type can be a gate: its declaration sets blueprint.NodeType.Gate
// and its node reports pass or fail through its Outcome, with Reason and
// optional Details. The registry decorator below runs such nodes the way
// the built-in gates run: on a box held exclusively, with the change
// fingerprinted before the node starts and checked again after it ends.
// The verdict is recorded by the harness, keyed by node id and tied to the
// fingerprint the harness took, so a node cannot vouch for a change it did
// not see, and promotion reads nothing but these recorded verdicts.

// Decorator returns the registry decorator for gate types other than
// the built-in ones in own, which are wrapped (and record) themselves.
func Decorator(own map[string]bool) runtime.Decorator {
	return func(spec blueprint.NodeType, f runtime.Factory) runtime.Factory {
		if !spec.Gate || own[spec.Name] {
			return f
		}
		return func(n *blueprint.Node) (runtime.Node, error) {
			inner, err := f(n)
			if err != nil {
				return nil, err
			}
			return &quietNode{inner: inner, gate: true, publish: true}, nil
		}
	}
}

// runPublished runs a gate node that is not built in and records what it
// returned as its verdict on the change fingerprinted as fp. A node that
// breaks, panics or returns no result leaves a failed verdict behind, so an
// earlier pass cannot stand in for a judgement that did not happen.
func (q *quietNode) runPublished(ctx context.Context, in *runtime.Input, fp string) (res *runtime.Result, err error) {
	l, err := LedgerOf(in)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	r := verdict.GateResult{Node: in.NodeID, Kind: in.Spec.Type, Fingerprint: fp, Reason: "the gate panicked"}
	done := false
	defer func() {
		if !done {
			r.DurationMS = time.Since(start).Milliseconds()
			_ = l.recordAttempt(in, r)
		}
	}()
	res, err = q.inner.Run(ctx, in)
	done = true
	r.DurationMS = time.Since(start).Milliseconds()
	switch {
	case err != nil:
		r.Reason = "the gate broke: " + err.Error()
	case res == nil:
		r.Reason = "the gate returned no result"
	default:
		r.Pass, r.Reason, r.Details = verdictOf(res)
	}
	if rerr := l.recordAttempt(in, r); rerr != nil {
		return nil, rerr
	}
	if err != nil || res == nil {
		return res, err
	}
	res.Artifacts = append(res.Artifacts, "verify.json")
	if !r.Pass && res.Outcome == runtime.OutcomePass {
		res.Outcome, res.Reason = runtime.OutcomeFail, r.Reason
		res.Feedback = r.Reason + "\n" + res.Feedback
	}
	return res, nil
}

// verdictOf reads a gate node's result: only OutcomePass passes, and
// details that cannot be recorded fail the gate rather than go missing.
func verdictOf(res *runtime.Result) (pass bool, reason string, details map[string]any) {
	pass, reason = res.Outcome == runtime.OutcomePass, res.Reason
	if !pass && reason == "" {
		reason = fmt.Sprintf("the gate's outcome was %q", res.Outcome)
	}
	if len(res.Details) == 0 {
		return pass, reason, nil
	}
	// A copy through JSON: the verdict keeps what the node said when it
	// ended, not what its map holds later.
	b, err := json.Marshal(res.Details)
	if err == nil {
		err = json.Unmarshal(b, &details)
	}
	if err != nil {
		return false, fmt.Sprintf("the gate's details cannot be recorded: %v", err), nil
	}
	return pass, reason, details
}
