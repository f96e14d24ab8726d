package gate

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/sandgate/sandgate/nodes/internal/gitstore"
	"github.com/sandgate/sandgate/nodes/workspace"
	"github.com/sandgate/sandgate/runtime"
	"github.com/sandgate/sandgate/sandbox"
)

// Two boxes: the agent's and the judge's. A gate never runs a command in
// the box the agent worked in, whose caches, /tmp, home directory and
// ignored files the agent's commands wrote. It judges the candidate: the
// tree the commit will hold (the change as git add -A would stage it,
// ignored files left out), captured while the gate holds the run's box,
// and laid out from the promotion repository's objects over the base
// snapshot in a box started fresh for this one verdict. Its caches are
// copy-on-write layers over the user's caches, which no agent command
// wrote (a box's commands only ever write their own upper layer); its
// upper layers and disk are new, and it is thrown away when the gate
// ends, so what a gate compiles is compiled again by the next one. The
// verdict records the tree, and git_commit commits no other.
//
// The box starts on the gate's first command: a gate that only reads the
// change (diff_cap, protect, a custom gate reading the diff) pays nothing
// for it.

// Candidate is what a gate judges: the change as the commit will hold it.
type Candidate struct {
	// Tree is the git tree the commit will have.
	Tree string
	// Changes are the changed paths the commit holds: the run's change
	// without the files .gitignore keeps out.
	Changes []sandbox.Change
	// Ignored are the changed paths .gitignore keeps out of the commit;
	// no gate sees them.
	Ignored []string

	repo *gitstore.Repo
	tree plumbing.Hash
}

// capture builds the candidate of a change: its commit in the promotion
// repository, whose tree is what the judge box holds. The caller holds
// the run's box exclusively.
func capture(w *workspace.Workspace, changes []sandbox.Change) (*Candidate, error) {
	p, err := w.Promotion()
	if err != nil {
		return nil, err
	}
	kept, ignored, err := p.Promoted(changes)
	if err != nil {
		return nil, err
	}
	sig := object.Signature{Name: "sandgate", Email: "sandgate@localhost", When: time.Unix(0, 0).UTC()}
	c, err := p.CommitSplit(p.Base(), changes, kept, ignored, "candidate\n", sig)
	if err != nil {
		return nil, err
	}
	return &Candidate{Tree: c.TreeHash.String(), Changes: kept, Ignored: ignored, repo: p, tree: c.TreeHash}, nil
}

type candidateKey struct{}

// Judged is the candidate the running gate judges; ok is false outside a
// gate.
func Judged(ctx context.Context) (*Candidate, bool) {
	c, ok := ctx.Value(candidateKey{}).(*Candidate)
	return c, ok && c != nil
}

// JudgedChanges is the change a gate reads for itself: the running gate's
// candidate, ignored files left out, or outside a gate the run's whole
// change.
func JudgedChanges(ctx context.Context, w *workspace.Workspace) ([]sandbox.Change, error) {
	if c, ok := Judged(ctx); ok {
		return c.Changes, nil
	}
	return w.Changes()
}

// judge is one verdict's box, started on the gate's first command. It is
// a workspace.Runner: every command the gate runs through the workspace
// comes here.
type judge struct {
	w      *workspace.Workspace
	cand   *Candidate
	hidden string // held-out tests laid over the candidate, "" for none
	// planted are files the gate asked the harness to lay over the
	// candidate (Plant), such as another language's canary tests.
	planted map[string][]byte
	// heldOut are the held-out tests' paths in the workspace.
	heldOut []string

	mu      sync.Mutex
	box     *sandbox.Box
	err     error
	cleanup func()
	// root is the judge box's workspace on the host (its upper layer, or
	// its copy); start is what it held before the gate's first command.
	root  string
	start map[string]stamp
	// toolchain is the Go toolchain's bookkeeping the judge box's go
	// commands may write (prepareToolchain).
	toolchain map[string]bool
}

// Exec runs a gate's command in the judge box.
func (j *judge) Exec(ctx context.Context, c sandbox.Command) (*sandbox.Result, error) {
	b, err := j.boxFor(ctx)
	if err != nil {
		return nil, err
	}
	return b.Exec(ctx, c)
}

// boxFor starts the judge box once; a box that failed to start fails
// every command of the gate.
func (j *judge) boxFor(ctx context.Context) (*sandbox.Box, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.box == nil && j.err == nil {
		j.box, j.root, j.cleanup, j.err = startJudge(ctx, j.w, j.cand, j.hidden, j.planted)
		if j.err == nil {
			j.toolchain, j.err = prepareToolchain(ctx, j.w, j.cand, j.box)
		}
		if j.err == nil {
			j.start, j.err = stamps(j.root)
		}
		if j.err == nil && j.hidden != "" {
			j.heldOut, j.err = HiddenFiles(j.hidden)
		}
		if j.err != nil {
			j.err = fmt.Errorf("the judge box: %w", j.err)
		}
	}
	return j.box, j.err
}

// Plant asks the running gate's judge box to hold files (slash paths in
// the workspace) laid over the candidate before its first command: a
// gate's own canary tests, planted where the repository's test
// configuration reaches them. They are there when the box starts, so they
// are no write of the gate's commands; the commit never holds them. It
// fails once the judge box has started, outside a gate, and for a path
// the base snapshot or the change already has.
func Plant(ctx context.Context, files map[string][]byte) error {
	s, ok := ctx.Value(sessionKey{}).(*session)
	if !ok {
		return errors.New("files are planted in a gate's judge box; no gate is running")
	}
	j := s.judge
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.box != nil {
		return errors.New("the judge box has started; files are planted before its first command")
	}
	if j.planted == nil {
		j.planted = map[string][]byte{}
	}
	for f, b := range files {
		j.planted[f] = b
	}
	return nil
}

// placePlanted lays Plant's files into the judge box's layer; one the
// base or the candidate already has is refused, never overwritten.
func placePlanted(snapshot string, cand *Candidate, files map[string][]byte, layout string) error {
	for f := range files {
		if _, err := os.Lstat(filepath.Join(snapshot, filepath.FromSlash(f))); err == nil {
			return fmt.Errorf("planted file %s collides with the repository's", f)
		}
		for _, c := range cand.Changes {
			if c.Path == f {
				return fmt.Errorf("planted file %s collides with the change's", f)
			}
		}
	}
	return place(files, layout)
}

// recapture replaces the candidate after the harness changed the run's
// workspace during the gate (protect's revert), before any command ran.
func (j *judge) recapture(c *Candidate) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.box != nil {
		return errors.New("the workspace changed after the judge box was built from it")
	}
	if j.cand == nil {
		j.cand = c
	} else {
		*j.cand = *c // the gate's context holds this candidate
	}
	j.err = nil
	return nil
}

// changed lists what the gate's commands wrote in the judge box's
// workspace (the tree they judged is not what they were given), and
// apart, the toolchain's bookkeeping they wrote, which is no such write.
func (j *judge) changed() (out, toolchain []string, err error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.box == nil {
		return nil, nil, nil
	}
	now, err := stamps(j.root)
	if err != nil {
		return nil, nil, fmt.Errorf("read the judge box's workspace: %w", err)
	}
	heldOutRemoved(j.start, now, j.heldOut)
	out, toolchain = wsState{stamps: now, toolchain: j.toolchain}.changedSince(wsState{stamps: j.start, toolchain: j.toolchain})
	return j.classify(out), toolchain, nil
}

// classify labels each path written in the judge box by what it is now:
// a file the commit would hold, one git would ignore, or one gone.
func (j *judge) classify(paths []string) []string {
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = p
		if strings.HasSuffix(p, "/") || strings.HasPrefix(p, "(") {
			continue
		}
		info, err := os.Lstat(filepath.Join(j.root, filepath.FromSlash(p)))
		if err != nil || info.Mode()&os.ModeCharDevice != 0 { // absent, or an overlay whiteout
			out[i] = p + " (back to its base content, or removed)"
			continue
		}
		probe := []sandbox.Change{{Path: p, Mode: info.Mode()}}
		for _, c := range j.cand.Changes {
			if path.Base(c.Path) == ".gitignore" {
				probe = append(probe, c)
			}
		}
		if _, ignored, err := j.cand.repo.Promoted(probe); err == nil && slices.Contains(ignored, p) {
			out[i] = p + " (ignored by git)"
		} else {
			out[i] = p + " (part of the change)"
		}
	}
	return out
}

// prepareToolchain creates, empty, the Go toolchain's bookkeeping that the
// candidate leaves out: a go.work.sum beside a go.work that git ignores
// and the base does not track, which every go command writes in a fresh
// clone of a workspace (workspace.ToolchainFiles). Made before the gate's
// first command, Go's write changes that file only, never its directory,
// and the verdict names it (toolchain_wrote) instead of failing the gate.
func prepareToolchain(ctx context.Context, w *workspace.Workspace, cand *Candidate, box *sandbox.Box) (map[string]bool, error) {
	probe := append(slices.Clone(cand.Changes), sandbox.Change{Path: workspace.GoWorkSum, Mode: 0o644})
	files, err := w.ToolchainFiles(probe)
	if err != nil || !files[workspace.GoWorkSum] {
		return nil, err
	}
	// noclobber: nothing there is followed or truncated.
	res, err := box.Exec(ctx, sandbox.Command{Args: []string{"sh", "-c", "set -C; : > " + workspace.GoWorkSum}, Timeout: time.Minute})
	if err != nil {
		return nil, err
	}
	if res.ExitCode != 0 {
		return nil, fmt.Errorf("create an empty %s: %s", workspace.GoWorkSum, res.Output)
	}
	return files, nil
}

// FreshBox starts, for the running gate, a second box like its judge box
// (the candidate over the base snapshot), whose caches no command wrote,
// not even the gate's own: code the gate has run, the change's tests,
// may have written its judge box's module cache. close stops the box and
// deletes everything written in it.
func FreshBox(ctx context.Context, w *workspace.Workspace) (*sandbox.Box, func(), error) {
	cand, ok := Judged(ctx)
	if !ok {
		return nil, nil, errors.New("a fresh box is built from the candidate a gate judges; no gate is judging one")
	}
	box, _, cleanup, err := startJudge(ctx, w, cand, "", nil)
	if err != nil {
		return nil, nil, fmt.Errorf("start a fresh box: %w", err)
	}
	return box, func() { box.Close(); cleanup() }, nil
}

// close throws the judge box away, with everything written in it.
func (j *judge) close() {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.box != nil {
		j.box.Close()
		j.cleanup()
		j.box = nil
	}
	if j.err == nil {
		j.err = errors.New("the judge box is closed: the gate ended")
	}
}

// startJudge builds the box for one verdict: the run's box options (its
// policy, proxy and caches, which are copy-on-write layers with fresh
// upper layers in every box) over the base snapshot and the candidate's
// tree, plus held-out tests when the gate has them. root is its
// workspace on the host.
func startJudge(ctx context.Context, w *workspace.Workspace, cand *Candidate, hidden string, planted map[string][]byte) (box *sandbox.Box, root string, cleanup func(), err error) {
	opts, ok := w.BoxOptions()
	if !ok {
		return nil, "", nil, errors.New("the workspace was not built by nodes.Environment")
	}
	var files []string
	if hidden != "" {
		if files, err = HiddenFiles(hidden); err != nil {
			return nil, "", nil, fmt.Errorf("hidden tests: %w", err)
		}
	}
	state, err := os.MkdirTemp("", "sg-judge-")
	if err != nil {
		return nil, "", nil, err
	}
	// The deferred removal keeps its own reference: a failed return sets
	// the named result cleanup to nil before it runs.
	drop := func() { RemoveAll(state) }
	cleanup = drop
	defer func() {
		if err != nil {
			drop()
		}
	}()
	opts.StateDir, opts.AuditPath = filepath.Join(state, "box"), ""
	overlay := opts.Snapshot != "" && w.Box.Upper() != ""
	layout := filepath.Join(state, "seed")
	if overlay {
		opts.Seed, opts.NoOverlay, opts.Workspace = layout, false, ""
		err = layer(cand, layout)
	} else {
		// The run's box is a copy (the kernel refused the overlay, or it
		// runs unconfined): the judge gets a copy of its own.
		opts.Snapshot, opts.Workspace, opts.Seed = "", layout, ""
		err = copyOf(ctx, w.Snapshot, cand, layout)
	}
	if err == nil && hidden != "" {
		err = placeHidden(w.Snapshot, hidden, files, layout)
		if err != nil {
			err = fmt.Errorf("hidden tests: %w", err)
		}
	}
	if err == nil && len(planted) > 0 {
		err = placePlanted(w.Snapshot, cand, planted, layout)
	}
	if err != nil {
		return nil, "", nil, err
	}
	box, err = sandbox.Start(ctx, opts)
	if err != nil {
		return nil, "", nil, fmt.Errorf("start it: %w", err)
	}
	if opts.Seed != "" {
		// The box holds its own copy of the layer now.
		RemoveAll(layout)
	}
	root = box.Upper()
	if !overlay {
		root = box.Merged()
		if root == "" {
			root = layout
		}
	}
	if overlay && root == "" {
		// The box fell back to copying the base snapshot, which lacks the
		// candidate: judging there would vouch for the wrong code.
		box.Close()
		return nil, "", nil, errors.New("the kernel refused the overlay, so the candidate cannot be laid over the base")
	}
	return box, root, cleanup, nil
}

// layer writes the candidate as an overlay layer over the base snapshot.
func layer(cand *Candidate, dir string) error {
	if err := os.Mkdir(dir, 0o755); err != nil {
		return err
	}
	return cand.repo.WriteLayer(cand.tree, dir)
}

// copyOf writes a whole copy of the candidate: the base snapshot, then
// the candidate's difference from it. The copy is made with the harness
// as owner, so the box hands all of it to the commands' uid.
func copyOf(ctx context.Context, snapshot string, cand *Candidate, dir string) error {
	if err := copyTree(ctx, snapshot, dir, "--no-preserve=ownership"); err != nil {
		return err
	}
	return cand.repo.ApplyTree(cand.tree, dir)
}

// CandidateDiff is the file in a gate attempt's directory holding the
// diff of the candidate it judged (against the base), so a person sees
// the change as it stood at each turn of a retry loop, not only the last.
const CandidateDiff = "candidate.diff"

// maxCandidateDiff bounds what one attempt keeps of it.
const maxCandidateDiff = 2 << 20

// recordCandidate writes the candidate's diff to the gate's attempt
// directory (credentials redacted, as everything the harness writes). It
// is a record for people, not evidence: a failure to render or write it
// leaves the verdict alone. An empty change writes nothing.
func recordCandidate(ctx context.Context, w *workspace.Workspace, in *runtime.Input, c *Candidate) {
	text, err := w.PatchText(ctx, c.repo, c.tree)
	if err != nil || text == "" {
		return
	}
	if len(text) > maxCandidateDiff {
		text = text[:maxCandidateDiff] + "\n[sandgate: the diff is longer; cut here]\n"
	}
	_ = in.WriteFile(CandidateDiff, []byte(text))
}
