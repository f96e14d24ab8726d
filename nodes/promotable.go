package nodes

import (
	"fmt"

	"github.com/sandgate/sandgate/nodes/internal/gate"
	"github.com/sandgate/sandgate/nodes/internal/gitstore"
	"github.com/sandgate/sandgate/nodes/workspace"
	"github.com/sandgate/sandgate/runtime"
	"github.com/sandgate/sandgate/sandbox"
)

// promotable is what a promotion node may act on once the shared
// preamble (startPromotion) let it through.
type promotable struct {
	w      *Workspace
	ledger *gate.Ledger
	// changes is the change the passing verdict judged.
	changes []sandbox.Change
	// commit and p are set when a commit was required: the recorded commit
	// holds exactly changes, and p is the repository it lives in.
	commit *committed
	p      *gitstore.Repo
}

// startPromotion is the check every promotion node (git_commit, git_push,
// review) makes before acting: the latest verdict passed on the change as
// it is now and the change may leave the run (checkPromotable). With
// needCommit it also requires the recorded commit to hold exactly that
// change, so push and review never send something no gate judged.
//
// A refusal comes back as a handoff result (see refuse), never as an
// error: whatever edge follows the node, the run goes to a person. err is
// for the harness's own failures.
func startPromotion(in *runtime.Input, needCommit bool) (*promotable, *runtime.Result, error) {
	w, err := workspace.Of(in)
	if err != nil {
		return nil, nil, err
	}
	l, err := gate.LedgerOf(in)
	if err != nil {
		return nil, nil, err
	}
	pr := &promotable{w: w, ledger: l}
	if err := pr.check(needCommit); err != nil {
		return nil, refuse(err), nil
	}
	return pr, nil, nil
}

func (pr *promotable) check(needCommit bool) error {
	changes, err := pr.ledger.RequirePassed(pr.w)
	if err != nil {
		return err
	}
	pr.changes = changes
	if !needCommit {
		return pr.w.CheckPromotable(changes)
	}
	if pr.commit, err = lastCommit(pr.w.RunDir); err != nil {
		return err
	}
	// The candidate commit runs checkPromotable itself (promotion.commit).
	p, cand, err := pr.w.CandidateOf(changes)
	if err != nil {
		return err
	}
	if cand.TreeHash.String() != pr.commit.Tree {
		return fmt.Errorf("the workspace changed after commit %s: commit again after the gates pass", pr.commit.Commit[:12])
	}
	pr.p = p
	return nil
}

// refuse is what a promotion node returns when the verdict does not allow
// it: the run is handed to a person, whatever edge follows the node.
func refuse(err error) *runtime.Result {
	return &runtime.Result{Outcome: runtime.OutcomeHandoff, Reason: err.Error(), Feedback: err.Error()}
}
