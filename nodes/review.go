package nodes

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/sandgate/sandgate/blueprint"
	"github.com/sandgate/sandgate/runtime"
)

// Review hands the verified change to people: an entry in a local review
// queue, or a GitHub pull request. The harness ends at "review requested";
// what approving does (on_approve) is recorded for the person who decides.
type Review struct {
	queue, repo, base, baseURL, tokenEnv, dir string
	// allowed are the operator's URL prefixes for tokens (--allow-endpoint).
	allowed   []string
	onApprove *ApproveAction
}

var _ runtime.Node = (*Review)(nil)

// newReview builds a review node whose local queue, unless the blueprint
// names one, is dir, else .sandgate/reviews.
func newReview(spec *blueprint.Node, allowed []string, dir string) (runtime.Node, error) {
	c, err := blueprint.Decode[ReviewConfig](spec)
	if err != nil {
		return nil, err
	}
	r := &Review{allowed: allowed, queue: c.Queue, repo: c.Repo, base: c.Base, baseURL: c.BaseURL, tokenEnv: c.TokenEnv, dir: c.Dir}
	if r.onApprove, err = parseOnApprove(c.Queue, c.OnApprove); err != nil {
		return nil, fmt.Errorf("on_approve: %w", err)
	}
	if r.dir == "" {
		r.dir = cmp.Or(dir, filepath.Join(".sandgate", "reviews"))
	}
	return r, nil
}

// Run implements runtime.Node.
func (r *Review) Run(ctx context.Context, in *runtime.Input) (*runtime.Result, error) {
	pr, refused, err := startPromotion(in, true)
	if pr == nil {
		return refused, err
	}
	w, c, p := pr.w, pr.commit, pr.p
	patch, err := w.patch(ctx, p, plumbing.NewHash(c.Tree))
	if err != nil {
		return nil, err
	}
	title, err := in.Render("title")
	if err != nil {
		return nil, err
	}
	if title == "" {
		title = c.Title
	}
	verify, _ := os.ReadFile(filepath.Join(w.RunDir, "verify.json"))
	body := reviewBody(w, c, title, verify)
	entry := ReviewEntry{ID: w.RunID, Title: title, Branch: c.Branch, Commit: c.Commit, Base: w.Base,
		RunDir: w.RunDir, Status: StatusPending, Created: time.Now().UTC(), DeleteOnReject: w.pushes(),
		AgentSummary: agentSummary(w.RunDir)}
	if entry.OnApprove, err = r.approveAction(w); err != nil {
		return nil, err
	}
	res := &runtime.Result{Outcome: runtime.OutcomePass}
	if r.queue == "github" {
		if res, entry.PullRequest, err = r.pullRequest(ctx, c, title, body); err != nil || entry.OnApprove == nil || entry.PullRequest == nil {
			// Without on_approve the pull request is the whole review.
			return res, err
		}
	}
	files := map[string][]byte{"diff.patch": []byte(patch), "verify.json": verify, "summary.md": []byte(body), "entry.json": mustJSON(entry)}
	dir, err := writeEntry(filepath.Join(r.dir, w.RunID), files, w.redact.Bytes)
	if err != nil || r.queue == "github" {
		return res, err
	}
	res.Outputs = map[string]any{"url": dir, "id": w.RunID}
	return res, nil
}

// approveAction is on_approve completed from what the run did: a local
// queue lands the change on the remote the run pushed to, unless
// on_approve names another.
func (r *Review) approveAction(w *Workspace) (*ApproveAction, error) {
	if r.onApprove == nil || r.queue == "github" {
		return r.onApprove, nil
	}
	a := *r.onApprove
	// push.json, not memory: a resumed run still knows where it pushed.
	last, err := w.lastPush()
	pushed := err == nil
	switch {
	case a.Remote == "" && !pushed:
		return nil, errors.New("on_approve: no remote to merge into: name one (on_approve.remote) or push the branch with a git_push node before the review")
	case a.Remote == "":
		a.Remote, a.TokenEnv = last.Remote, last.TokenEnv
	case pushed && a.Remote == last.Remote:
		a.TokenEnv = last.TokenEnv
	}
	return &a, nil
}

// writeEntry writes a queue entry's files, entry.json last so a listed
// entry is whole, and returns the entry's absolute directory.
func writeEntry(dir string, files map[string][]byte, redact func([]byte) []byte) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	for _, name := range []string{"diff.patch", "verify.json", "summary.md", "entry.json"} {
		if err := writeFileAtomic(filepath.Join(dir, name), redact(files[name])); err != nil {
			return "", err
		}
	}
	return filepath.Abs(dir)
}

// agentSummary is the latest summary an agent node published
// (outputs.<agent>.summary) in the run's journal, "" when none did.
func agentSummary(runDir string) string {
	evs, err := runtime.ReadJournal(filepath.Join(runDir, "events.jsonl"))
	if err != nil {
		return ""
	}
	var out string
	for _, ev := range evs {
		if s, ok := ev.Outputs["summary"].(string); ok && ev.Type == runtime.EvNodeFinished && s != "" {
			out = s
		}
	}
	return out
}

// Review queue entry states.
const (
	StatusPending  = "pending"
	StatusApproved = "approved"
	StatusRejected = "rejected"
)

// ReviewEntry is one change waiting in the local review queue.
type ReviewEntry struct {
	ID      string    `json:"id"`
	Title   string    `json:"title"`
	Branch  string    `json:"branch"`
	Commit  string    `json:"commit"`
	Base    string    `json:"base"`
	RunDir  string    `json:"run_dir"`
	Status  string    `json:"status"`
	Created time.Time `json:"created"`
	Decided time.Time `json:"decided,omitempty"`
	// DecidedBy is who approved or rejected the change.
	DecidedBy string `json:"decided_by,omitempty"`
	Note      string `json:"note,omitempty"`
	// AgentSummary is the agent's own account of its change (the agent
	// node's outputs.summary).
	AgentSummary string `json:"agent_summary,omitempty"`
	// OnApprove is what approving does; nil only records the decision.
	OnApprove *ApproveAction `json:"on_approve,omitempty"`
	// PullRequest is the pull request a github review opened.
	PullRequest *PullRequest `json:"pull_request,omitempty"`
	// Landed is the commit the target branch points at after approval:
	// the reviewed commit (ff), a merge commit, or GitHub's merge commit.
	Landed string `json:"landed,omitempty"`
	// DeleteOnReject are branches a git_push node with delete_on_reject
	// pushed; rejecting the entry deletes them on their remotes.
	DeleteOnReject []PushedBranch `json:"delete_on_reject,omitempty"`
}

func reviewBody(w *Workspace, c *committed, title string, verify []byte) string {
	var b strings.Builder
	fmt.Fprintf(&b, "## %s\n\nProposed by sandgate run `%s` on branch `%s` (commit `%s`, base `%s`).\n\n", title, w.RunID, c.Branch, c.Commit[:12], w.Base[:12])
	fmt.Fprintf(&b, "### Verification verdict\n\n```json\n%s\n```\n\n", strings.TrimSpace(string(verify)))
	fmt.Fprintf(&b, "### Evidence\n\n- run directory: `%s`\n- timeline: `sandgate show %s`\n- trace: `%s`\n- commands run in the sandbox: `%s`\n",
		w.RunDir, w.RunDir, filepath.Join(w.RunDir, "trace.json"), filepath.Join(w.RunDir, "commands.jsonl"))
	b.WriteString("\nThe harness stops here: merging is a person's decision.\n")
	return b.String()
}

func mustJSON(v any) []byte {
	b, _ := json.MarshalIndent(v, "", "  ")
	return append(b, '\n')
}
