package promote

import (
	"fmt"

	"github.com/sandgate/sandgate/nodes/internal/gate"
	"github.com/sandgate/sandgate/nodes/internal/gitstore"
	"github.com/sandgate/sandgate/nodes/workspace"
	"github.com/sandgate/sandgate/runtime"
	"github.com/sandgate/sandgate/sandbox"
)

// Promotable is what a promotion node may act on once the shared
// preamble (Start) let it through.
type Promotable struct {
	Workspace *workspace.Workspace
	ledger    *gate.Ledger
	// Changes is the change the passing verdict judged.
	Changes []sandbox.Change
	// Commit and Repo are set when a commit was required: the recorded
	// commit holds exactly Changes, and Repo is the repository it lives in.
	Commit *Committed
	Repo   *gitstore.Repo
}

// Start is the check every promotion node (git_commit, git_push,
// review) makes before acting: the latest verdict passed on the change as
// it is now and the change may leave the run (CheckPromotable). With
// needCommit it also requires the recorded commit to hold exactly that
// change, so push and review never send something no gate judged.
//
// A refusal comes back as a handoff result (see Refuse), never as an
// error: whatever edge follows the node, the run goes to a person. err is
// for the harness's own failures.
func Start(in *runtime.Input, needCommit bool) (*Promotable, *runtime.Result, error) {
	w, err := workspace.Of(in)
	if err != nil {
		return nil, nil, err
	}
	l, err := gate.LedgerOf(in)
	if err != nil {
		return nil, nil, err
	}
	pr := &Promotable{Workspace: w, ledger: l}
	if err := pr.check(needCommit); err != nil {
		return nil, Refuse(err), nil
	}
	return pr, nil, nil
}

func (pr *Promotable) check(needCommit bool) error {
	changes, err := pr.ledger.RequirePassed(pr.Workspace)
	if err != nil {
		return err
	}
	pr.Changes = changes
	if !needCommit {
		return pr.Workspace.CheckPromotable(changes)
	}
	if pr.Commit, err = LastCommit(pr.Workspace.RunDir); err != nil {
		return err
	}
	// The candidate commit runs CheckPromotable itself (gitstore.Repo.CommitSplit).
	p, cand, err := pr.Workspace.CandidateOf(changes)
	if err != nil {
		return err
	}
	if cand.TreeHash.String() != pr.Commit.Tree {
		return fmt.Errorf("the workspace changed after commit %s: commit again after the gates pass", pr.Commit.Commit[:12])
	}
	if err := pr.RequireTree(pr.Commit.Tree); err != nil {
		return err
	}
	if err := Remake(p, pr.Commit, changes); err != nil {
		return err
	}
	pr.Repo = p
	return nil
}

// RequireTree refuses a tree other than the one the gates judged (see
// gate.Ledger.RequireTree).
func (pr *Promotable) RequireTree(tree string) error {
	return pr.ledger.RequireTree(tree)
}

// Refuse is what a promotion node returns when the verdict does not allow
// it: the run is handed to a person, whatever edge follows the node.
func Refuse(err error) *runtime.Result {
	return &runtime.Result{Outcome: runtime.OutcomeHandoff, Reason: err.Error(), Feedback: err.Error()}
}
