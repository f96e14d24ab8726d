package gate

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/sandgate/sandgate/blueprint"
	"github.com/sandgate/sandgate/nodes/verdict"
	"github.com/sandgate/sandgate/nodes/workspace"
	"github.com/sandgate/sandgate/runtime"
)

// promoteKinds are the node types that let a change leave the box.
var promoteKinds = map[string]bool{"git_commit": true, "git_push": true, "review": true}

// session is a running gate; revert moves its baseline, because a revert
// by the harness (protect's action: revert) is not the gate's command
// writing.
type session struct {
	w      *workspace.Workspace
	before wsState
}

func (s *session) rebase() error {
	st, err := observe(s.w)
	if err == nil {
		s.before = st
	}
	return err
}

// sessionKey is the context key of the running gate's *session.
type sessionKey struct{}

// quietNode runs a gate or promotion node with the box held exclusively:
// no other node changes the workspace while it judges or commits.
type quietNode struct {
	inner runtime.Node
	gate  bool
	// publish records the inner node's result as its verdict: a gate type
	// that is not built in (see Decorator). Built-in gates record
	// their own, richer verdicts.
	publish bool
}

// Quietly wraps a factory so its nodes run on a quiesced box: a gate
// (judge) or a promotion node holds the box exclusively for its whole
// run, and a gate is also checked for writes made while it ran.
func Quietly(f runtime.Factory, judge bool) runtime.Factory {
	return func(spec *blueprint.Node) (runtime.Node, error) {
		n, err := f(spec)
		if err != nil {
			return nil, err
		}
		return &quietNode{inner: n, gate: judge}, nil
	}
}

// Run implements runtime.Node.
func (q *quietNode) Run(ctx context.Context, in *runtime.Input) (*runtime.Result, error) {
	w, err := workspace.Of(in)
	if err != nil {
		return nil, err
	}
	// A node already holding the box (a wrapped gate inside another) does
	// not wait for itself (see Workspace.Quiet).
	ctx, release, err := w.Quiet(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	if !q.gate {
		return q.inner.Run(ctx, in)
	}
	if err := w.PrepareToolchainFiles(ctx); err != nil {
		return nil, err
	}
	before, err := observe(w)
	if err != nil {
		return nil, err
	}
	s := &session{w: w, before: before}
	ctx = context.WithValue(ctx, sessionKey{}, s)
	var hidden string
	var names bool
	if h, ok := q.inner.(HeldOut); ok {
		hidden, names = h.HeldOut()
	}
	var res *runtime.Result
	switch {
	case q.publish:
		res, err = q.runPublished(ctx, in, before.fp)
	case hidden != "":
		res, err = q.runHidden(ctx, w, in, hidden, names)
	default:
		res, err = q.inner.Run(ctx, in)
	}
	if err != nil || res == nil {
		return res, err
	}
	after, err := observe(w)
	if err != nil {
		return nil, err
	}
	changed, toolchain := after.changedSince(s.before)
	if len(changed) > 0 {
		return changedDuring(in, classify(w, changed), res)
	}
	if len(toolchain) > 0 {
		return noteToolchain(in, toolchain, res)
	}
	return res, nil
}

// noteToolchain names, in the gate's verdict, the bookkeeping its go
// commands updated: no write of the change, but the record says so.
func noteToolchain(in *runtime.Input, paths []string, res *runtime.Result) (*runtime.Result, error) {
	l, err := LedgerOf(in)
	if err != nil {
		return nil, err
	}
	g, ok := l.latest(in.NodeID)
	if !ok {
		return res, nil
	}
	details := map[string]any{}
	for k, v := range g.Details {
		details[k] = v
	}
	details["toolchain_wrote"] = paths
	g.Details = details
	if err := l.recordAttempt(in, g); err != nil {
		return nil, err
	}
	return res, nil
}

// changedDuring fails a gate whose workspace changed while it ran. Only
// its own commands could have written (the box was held exclusively), so
// what they wrote stays in the workspace, unvouched for: this verdict is a
// failure, and the next run of the gate judges the change with it.
func changedDuring(in *runtime.Input, paths []string, res *runtime.Result) (*runtime.Result, error) {
	l, err := LedgerOf(in)
	if err != nil {
		return nil, err
	}
	list := paths
	if len(list) > 20 {
		list = append(append([]string(nil), list[:20]...), fmt.Sprintf("… and %d more", len(paths)-20))
	}
	why := "the workspace changed while the gate ran: " + strings.Join(list, ", ")
	g, ok := l.latest(in.NodeID)
	if !ok {
		g = verdict.GateResult{Node: in.NodeID, Kind: in.Spec.Type}
	}
	g.Pass, g.Reason = false, why
	if err := l.recordAttempt(in, g); err != nil {
		return nil, err
	}
	res.Outcome, res.Reason = runtime.OutcomeFail, why
	res.Feedback = "The gate's verdict does not count: " + why + ".\nA gate's commands must not write in the workspace (write reports, caches and scratch files under /tmp); nothing may change the code while it is judged, and a file git ignores counts too: it never ships, yet the next gate here would judge the code with it.\n\n" + res.Feedback
	if dir, err := in.MkDir(); err == nil {
		_ = os.WriteFile(filepath.Join(dir, "changed-during-gate.txt"), []byte(strings.Join(paths, "\n")+"\n"), 0o644)
	}
	return res, nil
}
