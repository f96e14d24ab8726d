package promote

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/sandgate/sandgate/internal/termtext"
	"io"
	"net/mail"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/sandgate/sandgate/blueprint"
	"github.com/sandgate/sandgate/nodes/internal/atomicfile"
	"github.com/sandgate/sandgate/nodes/internal/gitremote"
	"github.com/sandgate/sandgate/nodes/internal/gitstore"
	"github.com/sandgate/sandgate/nodes/workspace"
	"github.com/sandgate/sandgate/runtime"
	"github.com/sandgate/sandgate/sandbox"
	"github.com/sandgate/sandgate/secrets"
)

// GitCommit commits the verified change on the run's branch of its
// promotion repository, as `git add -A` would stage it: new files the
// tree's .gitignore files ignore stay behind (see gitstore.Repo.Promoted) and are
// listed in the outputs and commit.json. It refuses unless the latest
// verdict passed.
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

// maxIgnoredListed bounds the ignored paths a commit's outputs and
// commit.json name; the full list is the attempt's ignored.txt.
const maxIgnoredListed = 100

// Committed records the branch and commit a run produced; push and review
// read it, and it survives a crash.
type Committed struct {
	Branch string `json:"branch"`
	Commit string `json:"commit"`
	Tree   string `json:"tree"`
	// Parent is the commit this one builds on: the base, or the run's
	// previous commit on the same branch.
	Parent string `json:"parent,omitempty"`
	// Attempt counts the run's commits on the branch, from 1.
	Attempt int `json:"attempt,omitempty"`
	// Title is the commit message's first line.
	Title string `json:"title,omitempty"`
	// Ignored names (at most maxIgnoredListed, sorted) the changed files
	// left out because git would ignore them; IgnoredCount counts all.
	Ignored      []string `json:"ignored,omitempty"`
	IgnoredCount int      `json:"ignored_count,omitempty"`
	// Message, Author and When are the rest of what the commit is made
	// of: a host the run moved to makes the same commit again from them
	// and the rebuilt change (Remake).
	Message string    `json:"message,omitempty"`
	Author  string    `json:"author,omitempty"`
	Email   string    `json:"email,omitempty"`
	When    time.Time `json:"when,omitzero"`
}

func LastCommit(runDir string) (*Committed, error) {
	b, err := os.ReadFile(filepath.Join(runDir, "commit.json"))
	if err != nil {
		return nil, fmt.Errorf("no commit yet: run a git_commit node first")
	}
	var c Committed
	return &c, json.Unmarshal(b, &c)
}

// Run implements runtime.Node. A later commit in the same run (after a
// CI or review failure sent the agent back) is a child of the run's
// previous commit on the branch, so pushing it fast-forwards the branch
// and the history tells what each attempt changed.
func (g *GitCommit) Run(ctx context.Context, in *runtime.Input) (*runtime.Result, error) {
	pr, refused, err := Start(in, false)
	if pr == nil {
		return refused, err
	}
	w, changes := pr.Workspace, pr.Changes
	msg, err := in.Render("message")
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(msg) == "" {
		msg = "sandgate: change from run " + w.RunID
	}
	// The message quotes what the box wrote (an agent's summary, a
	// command's output); git log prints it as it is, so its control
	// characters are written out here.
	msg = termtext.Text(msg)
	branch, err := g.branchFor(in, w)
	if err != nil {
		return nil, err
	}
	p, err := w.Promotion()
	if err != nil {
		return nil, err
	}
	kept, ignored, err := p.Promoted(changes)
	if err != nil {
		return nil, err
	}
	if err := holdsCredential(w.Redactor(), kept, ignored, msg); err != nil {
		return Refuse(err), nil
	}
	if err := writeIgnored(in, ignored); err != nil {
		return nil, err
	}
	if len(kept) == 0 {
		return &runtime.Result{Outcome: runtime.OutcomeFail, Feedback: noChange(ignored), Reason: "empty change",
			Outputs: ignoredOutputs(map[string]any{"commit": "", "branch": branch}, ignored)}, nil
	}
	rec, err := g.commitOn(pr, p, branch, kept, ignored, msg, commitTime(in))
	var notJudged errNotJudged
	if errors.As(err, &notJudged) {
		return Refuse(err), nil
	}
	if err != nil {
		return nil, err
	}
	out := map[string]any{"commit": rec.Commit, "branch": branch, "parent": rec.Parent, "attempt": rec.Attempt}
	return &runtime.Result{Outcome: runtime.OutcomePass, Outputs: ignoredOutputs(out, rec.allIgnored)}, nil
}

// commitOn commits changes on branch, on top of the run's previous commit
// there if any, and records it. When that previous commit already holds
// the same tree (a resumed run committing again) it is kept, so a push
// stays a no-op.
func (g *GitCommit) commitOn(pr *Promotable, p *gitstore.Repo, branch string, kept []sandbox.Change, ignored []string, msg string, when time.Time) (*commitRecord, error) {
	w, changes := pr.Workspace, pr.Changes
	parent, attempt := p.Base(), 1
	prev, err := LastCommit(w.RunDir)
	if err == nil && prev.Branch == branch {
		parent, attempt = plumbing.NewHash(prev.Commit), prev.Attempt+1
	}
	sig := g.author
	sig.When = when
	full := commitMessage(msg, attempt)
	c, err := p.CommitSplit(parent, changes, kept, ignored, full, sig)
	if err != nil {
		return nil, err
	}
	// The gates judged a tree; the commit holds that tree or none.
	if err := pr.RequireTree(c.TreeHash.String()); err != nil {
		return nil, errNotJudged{err}
	}
	if prev != nil && prev.Branch == branch && prev.Tree == c.TreeHash.String() {
		return &commitRecord{Committed: *prev, allIgnored: c.Ignored}, nil
	}
	rec := &commitRecord{Committed: Committed{Branch: branch, Commit: c.Hash.String(), Tree: c.TreeHash.String(),
		Parent: parent.String(), Attempt: attempt, Title: strings.SplitN(msg, "\n", 2)[0],
		Ignored: c.Ignored[:min(len(c.Ignored), maxIgnoredListed)], IgnoredCount: len(c.Ignored),
		Message: full, Author: sig.Name, Email: sig.Email, When: sig.When}, allIgnored: c.Ignored}
	return rec, recordCommit(w, p, rec.Committed)
}

// commitTime is the commit's author and committer date: the run's
// recorded start, never this host's clock, so the same tree on the same
// parent with the same message is the same commit wherever and however
// often it is made (a run moved to another host commits again and its
// push finds the branch already there). Without a recorded start (a
// node run outside a runtime) it is now.
func commitTime(in *runtime.Input) time.Time {
	t := in.Started
	if t.IsZero() {
		t = time.Now()
	}
	return t.UTC().Truncate(time.Second)
}

// errNotJudged is a commit whose tree no gate judged.
type errNotJudged struct{ error }

func (e errNotJudged) Unwrap() error { return e.error }

// commitRecord is a recorded commit and the full list of ignored paths.
type commitRecord struct {
	Committed
	allIgnored []string
}

// commitMessage ends a later attempt's message with a trailer counting
// the attempts, so the branch history tells the commits apart.
func commitMessage(msg string, attempt int) string {
	msg = strings.TrimRight(msg, "\n") + "\n"
	if attempt > 1 {
		msg += fmt.Sprintf("\nSandgate-Attempt: %d\n", attempt)
	}
	return msg
}

// noChange is the feedback when nothing would leave.
func noChange(ignored []string) string {
	if len(ignored) == 0 {
		return "There is no change to commit."
	}
	return fmt.Sprintf("There is no change to commit: the %d changed files are all ignored by the repository's .gitignore (%s).",
		len(ignored), listIgnored(ignored))
}

// ignoredOutputs adds what was left out: "ignored" (at most
// maxIgnoredListed paths) and "ignored_count".
func ignoredOutputs(out map[string]any, ignored []string) map[string]any {
	out["ignored"] = append([]string{}, ignored[:min(len(ignored), maxIgnoredListed)]...)
	out["ignored_count"] = len(ignored)
	return out
}

// listIgnored names the first ignored paths for people.
func listIgnored(ignored []string) string {
	if len(ignored) <= 10 {
		return strings.Join(ignored, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(ignored[:10], ", "), len(ignored)-10)
}

// writeIgnored keeps the full list of ignored paths in the attempt
// directory as ignored.txt.
func writeIgnored(in *runtime.Input, ignored []string) error {
	if len(ignored) == 0 {
		return nil
	}
	return in.WriteFile("ignored.txt", []byte(strings.Join(ignored, "\n")+"\n"))
}

// branchFor is the branch the commit goes on: the rendered template, the
// configured name, or sandgate/<run id>.
func (g *GitCommit) branchFor(in *runtime.Input, w *workspace.Workspace) (string, error) {
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
	if !gitremote.ValidBranch(branch) {
		return "", fmt.Errorf("invalid branch name %q", branch)
	}
	return branch, nil
}

// recordCommit points the branch at the commit in the promotion
// repository and writes commit.json, which push and review read and which
// survives a crash.
func recordCommit(w *workspace.Workspace, p *gitstore.Repo, rec Committed) error {
	if err := p.SetBranch(rec.Branch, rec.Commit); err != nil {
		return err
	}
	b, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	return atomicfile.Write(filepath.Join(w.RunDir, "commit.json"), w.Redactor().JSON(b))
}

// holdsCredential refuses a change or message that contains the value of
// a harness credential: one the operator let into the box could otherwise
// leave it in a commit, a pushed branch or a review entry. Rewriting the
// change would promote something no gate judged, so the run goes to a
// person instead. kept is what the commit holds (names and content are
// searched); ignored files stay behind, but their names are listed in the
// commit's outputs, so those are searched too.
func holdsCredential(redact *secrets.Redactor, kept []sandbox.Change, ignored []string, msg string) error {
	if name, ok := redact.Find([]byte(msg)); ok {
		return fmt.Errorf("the commit message holds the value of %s; credentials never leave the box in a commit", name)
	}
	for _, p := range ignored {
		if name, ok := redact.Find([]byte(p)); ok {
			return fmt.Errorf("%s holds the value of %s; credentials never leave the box in a commit", redact.String(p), name)
		}
	}
	for _, c := range kept {
		for _, b := range [][]byte{[]byte(c.Path), []byte(c.Link)} {
			if name, ok := redact.Find(b); ok {
				return fmt.Errorf("%s holds the value of %s; credentials never leave the box in a commit", redact.String(c.Path), name)
			}
		}
		if c.Deleted || c.Link != "" || !c.Mode.IsRegular() {
			continue
		}
		name, err := findCredential(redact, c)
		if err != nil {
			return err
		}
		if name != "" {
			return fmt.Errorf("%s holds the value of %s; credentials never leave the box in a commit", redact.String(c.Path), name)
		}
	}
	return nil
}

// credentialOverlap is how much of one chunk is searched again with the
// next, so a value split across two reads is still found.
const credentialOverlap = 64 << 10

// findCredential streams a changed file looking for a credential's value.
func findCredential(redact *secrets.Redactor, c sandbox.Change) (string, error) {
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
		if name, ok := redact.Find(buf); ok {
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
