package gate

import (
	"context"
	"errors"
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
// writing, and the candidate with it.
type session struct {
	w      *workspace.Workspace
	before wsState
	judge  *judge
	ledger *Ledger
	node   string
}

func (s *session) rebase() error {
	st, err := observe(s.w)
	if err != nil {
		return err
	}
	cand, err := capture(s.w, st.changes)
	if err != nil {
		return err
	}
	if err := s.judge.recapture(cand); err != nil {
		return err
	}
	s.before = st
	s.ledger.judge(s.node, cand.Tree)
	return nil
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
	if outer, judging := Judged(ctx); judging {
		// A gate inside another judges with it, in its box.
		l, err := LedgerOf(in)
		if err != nil {
			return nil, err
		}
		l.judge(in.NodeID, outer.Tree)
		defer l.done(in.NodeID)
		return q.inner.Run(ctx, in)
	}
	return q.judge(ctx, w, in)
}

// judge runs a gate on the candidate of the change as the run's box holds
// it now, its commands in a judge box of its own (judge.go).
func (q *quietNode) judge(ctx context.Context, w *workspace.Workspace, in *runtime.Input) (*runtime.Result, error) {
	before, err := observe(w)
	if err != nil {
		return nil, err
	}
	l, err := LedgerOf(in)
	if err != nil {
		return nil, err
	}
	var hidden string
	var names bool
	if h, ok := q.inner.(HeldOut); ok {
		hidden, names = h.HeldOut()
	}
	j := &judge{w: w, hidden: hidden}
	defer j.close()
	defer l.done(in.NodeID)
	// A change that cannot become a commit has no tree to judge: a gate
	// that reads the change itself (diff_cap) still says why, and one
	// that runs a command fails (see unjudgeable).
	if j.cand, j.err = capture(w, before.changes); j.err == nil {
		l.judge(in.NodeID, j.cand.Tree)
		ctx = context.WithValue(ctx, candidateKey{}, j.cand)
		recordCandidate(ctx, w, in, j.cand)
	} else {
		j.err = errUnjudgeable{j.err}
	}
	s := &session{w: w, before: before, judge: j, ledger: l, node: in.NodeID}
	ctx = workspace.WithRunner(context.WithValue(ctx, sessionKey{}, s), j)
	var res *runtime.Result
	switch {
	case q.publish:
		res, err = q.runPublished(ctx, in, before.fp)
	case hidden != "":
		res, err = q.runHidden(ctx, in, names)
	default:
		res, err = q.inner.Run(ctx, in)
	}
	var cannot errUnjudgeable
	if errors.As(err, &cannot) {
		return unjudgeable(in, l, cannot.error)
	}
	if err != nil || res == nil {
		return res, err
	}
	after, err := observe(w)
	if err != nil {
		return nil, err
	}
	changed, toolchain := after.changedSince(s.before)
	inJudge, judgeToolchain, err := j.changed()
	if err != nil {
		return nil, err
	}
	if len(changed) > 0 {
		changed = classify(w, changed)
	}
	if changed = append(changed, inJudge...); len(changed) > 0 {
		return changedDuring(in, changed, res)
	}
	if toolchain = append(toolchain, judgeToolchain...); len(toolchain) > 0 {
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

// errUnjudgeable is why a change has no candidate to judge.
type errUnjudgeable struct{ error }

func (e errUnjudgeable) Unwrap() error { return e.error }

// unjudgeable fails a gate whose change cannot become a commit (over the
// size cap, or a path git refuses): there is no tree to judge.
func unjudgeable(in *runtime.Input, l *Ledger, why error) (*runtime.Result, error) {
	g, ok := l.latest(in.NodeID)
	if !ok {
		g = verdict.GateResult{Node: in.NodeID, Kind: in.Spec.Type}
	}
	g.Pass, g.Reason, g.Tree = false, "the change cannot be committed, so there is nothing to judge: "+why.Error(), ""
	if err := l.recordAttempt(in, g); err != nil {
		return nil, err
	}
	return &runtime.Result{Outcome: runtime.OutcomeFail, Reason: g.Reason, Artifacts: []string{"verify.json"},
		Feedback: "The gate judges the change as the commit would hold it, and " + g.Reason + "."}, nil
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
