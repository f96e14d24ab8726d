package workspace

// Promotion, Candidate, CandidateOf and PatchText hand the built-in nodes
// the run's promotion repository (nodes/internal/gitstore), which is
// theirs alone; an embedder's node reads the change through Changes,
// Diff and Patch.

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/sandgate/sandgate/nodes/internal/gitstore"
	"github.com/sandgate/sandgate/sandbox"
)

// Promotion is the run's promotion repository (see gitstore.Repo), opened
// on first use; every commit it builds runs CheckPromotable.
func (w *Workspace) Promotion() (*gitstore.Repo, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.promo != nil {
		return w.promo, nil
	}
	p, err := gitstore.Open(filepath.Join(w.RunDir, "promote.git"), w.Snapshot, w.Base, w.CheckPromotable)
	if err != nil {
		return nil, err
	}
	w.promo = p
	return w.promo, nil
}

// closePromotion stops the promotion repository's object reader.
func (w *Workspace) closePromotion() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.promo == nil {
		return nil
	}
	err := w.promo.Close()
	w.promo = nil
	return err
}

// Candidate builds a throwaway commit of the current change, for stats
// and diffs.
func (w *Workspace) Candidate() (*gitstore.Repo, *gitstore.Commit, error) {
	changes, err := w.Changes()
	if err != nil {
		return nil, nil, err
	}
	return w.CandidateOf(changes)
}

// CandidateOf builds the throwaway commit of a given change.
func (w *Workspace) CandidateOf(changes []sandbox.Change) (*gitstore.Repo, *gitstore.Commit, error) {
	p, err := w.Promotion()
	if err != nil {
		return nil, nil, err
	}
	sig := object.Signature{Name: "sandgate", Email: "sandgate@localhost", When: time.Unix(0, 0).UTC()}
	c, err := p.CommitChange(p.Base(), changes, "candidate\n", sig)
	return p, c, err
}

// Diff renders the change so far as a unified diff against the base.
// The text is kept per tree, so the end of a run does not diff again
// what a node already diffed.
func (w *Workspace) Diff() (string, error) {
	p, c, err := w.Candidate()
	if err != nil {
		return "", err
	}
	return w.PatchText(context.Background(), p, c.TreeHash)
}

// Patch renders the change so far as a patch `git apply` takes: binary
// files as git binary patches, with full blob ids.
func (w *Workspace) Patch() ([]byte, error) {
	p, c, err := w.Candidate()
	if err != nil {
		return nil, err
	}
	text, err := p.Git(context.Background(), "diff-tree", "-p", "-r", "--binary", "--full-index", "--no-color",
		"--no-ext-diff", "--no-textconv", "--no-renames", p.BaseTree().String(), c.TreeHash.String())
	return []byte(text), err
}

// PatchText diffs the base tree against tree with git diff-tree, which reads
// only the subtrees whose hashes differ and the changed blobs. No external
// diff or textconv driver runs.
func (w *Workspace) PatchText(ctx context.Context, p *gitstore.Repo, tree plumbing.Hash) (string, error) {
	w.mu.Lock()
	if w.lastPatch.tree == tree {
		defer w.mu.Unlock()
		return w.lastPatch.text, nil
	}
	w.mu.Unlock()
	text, err := p.Git(ctx, "diff-tree", "-p", "-r", "--no-color", "--no-ext-diff", "--no-textconv", "--no-renames",
		p.BaseTree().String(), tree.String())
	if err != nil {
		return "", err
	}
	w.mu.Lock()
	w.lastPatch.tree, w.lastPatch.text = tree, text
	w.mu.Unlock()
	return text, nil
}

// Apply writes a patch as Patch renders it into the box's workspace with
// git apply, run in the box: a run moved to this host starts from its base
// and the change the harness recorded, nothing else.
func (w *Workspace) Apply(patch []byte) error {
	res, err := w.Command(context.Background(), sandbox.Command{Args: []string{"git", "apply", "--binary", "--whitespace=nowarn", "-"},
		Stdin: patch, Timeout: 5 * time.Minute})
	if err != nil {
		return err
	}
	if res.ExitCode != 0 {
		return fmt.Errorf("git apply in the box: exit %d: %.200q", res.ExitCode, res.Output)
	}
	return nil
}
