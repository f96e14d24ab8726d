package nodes

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/mail"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/sandgate/sandgate/blueprint"
	"github.com/sandgate/sandgate/runtime"
	"github.com/sandgate/sandgate/sandbox"
)

// GitCommit commits the verified change on a new branch of the run's
// promotion repository. It refuses unless the latest verdict passed.
type GitCommit struct {
	branch string
	author object.Signature
}

var _ runtime.Node = (*GitCommit)(nil)

func newGitCommit(spec *blueprint.Node) (runtime.Node, error) {
	c, err := blueprint.Decode[GitCommitConfig](spec)
	if err != nil {
		return nil, err
	}
	// GitCommitConfig.Validate refused unparsable authors before the
	// factory ran; the default author parses.
	addr, err := mail.ParseAddress(c.Author)
	if err != nil {
		return nil, fmt.Errorf("author: %w", err)
	}
	return &GitCommit{branch: c.Branch, author: object.Signature{Name: addr.Name, Email: addr.Address}}, nil
}

// validBranch reports whether git would accept name as a branch.
func validBranch(name string) bool {
	return plumbing.NewBranchReferenceName(name).IsBranch() && !strings.ContainsAny(name, " ~^:?*[\\") && !strings.Contains(name, "..")
}

// committed records the branch and commit a run produced; push and review
// read it, and it survives a crash.
type committed struct {
	Branch string `json:"branch"`
	Commit string `json:"commit"`
	Tree   string `json:"tree"`
	// Title is the commit message's first line.
	Title string `json:"title,omitempty"`
}

func (w *Workspace) lastCommit() (*committed, error) {
	b, err := os.ReadFile(filepath.Join(w.RunDir, "commit.json"))
	if err != nil {
		return nil, fmt.Errorf("no commit yet: run a git_commit node first")
	}
	var c committed
	return &c, json.Unmarshal(b, &c)
}

// Run implements runtime.Node.
func (g *GitCommit) Run(ctx context.Context, in *runtime.Input) (*runtime.Result, error) {
	pr, refused, err := startPromotion(in, false)
	if pr == nil {
		return refused, err
	}
	w, changes := pr.w, pr.changes
	msg, err := in.Render("message")
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(msg) == "" {
		msg = "sandgate: change from run " + w.RunID
	}
	if err := w.holdsCredential(changes, msg); err != nil {
		return refuse(err), nil
	}
	branch, err := g.branchFor(in, w)
	if err != nil {
		return nil, err
	}
	p, err := w.promotion()
	if err != nil {
		return nil, err
	}
	if len(changes) == 0 {
		return &runtime.Result{Outcome: runtime.OutcomeFail, Feedback: "There is no change to commit.", Reason: "empty change",
			Outputs: map[string]any{"commit": "", "branch": branch}}, nil
	}
	sig := g.author
	sig.When = time.Now().UTC().Truncate(time.Second)
	c, err := p.commit(changes, strings.TrimRight(msg, "\n")+"\n", sig)
	if err != nil {
		return nil, err
	}
	// On resume, an earlier attempt may have committed the same tree:
	// keep that commit so a push stays a no-op.
	if prev, err := w.lastCommit(); err == nil && prev.Branch == branch && prev.Tree == c.TreeHash.String() {
		return &runtime.Result{Outcome: runtime.OutcomePass, Outputs: map[string]any{"commit": prev.Commit, "branch": branch}}, nil
	}
	if err := w.recordCommit(p, branch, c, msg); err != nil {
		return nil, err
	}
	return &runtime.Result{Outcome: runtime.OutcomePass, Outputs: map[string]any{"commit": c.Hash.String(), "branch": branch}}, nil
}

// branchFor is the branch the commit goes on: the rendered template, the
// configured name, or sandgate/<run id>.
func (g *GitCommit) branchFor(in *runtime.Input, w *Workspace) (string, error) {
	branch := g.branch
	if t, ok := in.Spec.Templates["branch"]; ok {
		var err error
		if branch, err = t.Render(in.Scope); err != nil {
			return "", err
		}
	}
	if branch == "" {
		branch = "sandgate/" + w.RunID
	}
	if !validBranch(branch) {
		return "", fmt.Errorf("invalid branch name %q", branch)
	}
	return branch, nil
}

// recordCommit points branch at c in the promotion repository and writes
// commit.json, which push and review read and which survives a crash.
func (w *Workspace) recordCommit(p *promotion, branch string, c *builtCommit, msg string) error {
	refFile := filepath.Join(p.dir, filepath.FromSlash(plumbing.NewBranchReferenceName(branch).String()))
	if err := os.MkdirAll(filepath.Dir(refFile), 0o755); err != nil {
		return err
	}
	if err := writeFileAtomic(refFile, []byte(c.Hash.String()+"\n")); err != nil {
		return err
	}
	rec, _ := json.Marshal(committed{Branch: branch, Commit: c.Hash.String(), Tree: c.TreeHash.String(),
		Title: strings.SplitN(msg, "\n", 2)[0]})
	return writeFileAtomic(filepath.Join(w.RunDir, "commit.json"), rec)
}

// holdsCredential refuses a change or message that contains the value of
// a harness credential: one the operator let into the box could otherwise
// leave it in a commit, a pushed branch or a review entry. Rewriting the
// change would promote something no gate judged, so the run goes to a
// person instead.
func (w *Workspace) holdsCredential(changes []sandbox.Change, msg string) error {
	if name, ok := w.redact.Find([]byte(msg)); ok {
		return fmt.Errorf("the commit message holds the value of %s; credentials never leave the box in a commit", name)
	}
	for _, c := range changes {
		for _, b := range [][]byte{[]byte(c.Path), []byte(c.Link)} {
			if name, ok := w.redact.Find(b); ok {
				return fmt.Errorf("%s holds the value of %s; credentials never leave the box in a commit", w.redact.String(c.Path), name)
			}
		}
		if c.Deleted || c.Link != "" || !c.Mode.IsRegular() {
			continue
		}
		name, err := w.findCredential(c)
		if err != nil {
			return err
		}
		if name != "" {
			return fmt.Errorf("%s holds the value of %s; credentials never leave the box in a commit", w.redact.String(c.Path), name)
		}
	}
	return nil
}

// credentialOverlap is how much of one chunk is searched again with the
// next, so a value split across two reads is still found.
const credentialOverlap = 64 << 10

// findCredential streams a changed file looking for a credential's value.
func (w *Workspace) findCredential(c sandbox.Change) (string, error) {
	r, err := c.Open()
	if err != nil {
		return "", fmt.Errorf("%s: %w", c.Path, err)
	}
	defer r.Close()
	buf := make([]byte, 0, 1<<20+credentialOverlap)
	chunk := make([]byte, 1<<20)
	for {
		n, err := r.Read(chunk)
		buf = append(buf, chunk[:n]...)
		if name, ok := w.redact.Find(buf); ok {
			return name, nil
		}
		if len(buf) > credentialOverlap {
			buf = append(buf[:0], buf[len(buf)-credentialOverlap:]...)
		}
		if err == io.EOF {
			return "", nil
		}
		if err != nil {
			return "", fmt.Errorf("%s: %w", c.Path, err)
		}
	}
}
