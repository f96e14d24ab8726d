package review

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"github.com/sandgate/sandgate/internal/termtext"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/sandgate/sandgate/blueprint"
	"github.com/sandgate/sandgate/nodes/internal/credential"
	"github.com/sandgate/sandgate/nodes/internal/feedback"
	"github.com/sandgate/sandgate/nodes/internal/gate"
	"github.com/sandgate/sandgate/nodes/internal/github"
	"github.com/sandgate/sandgate/nodes/internal/promote"
	"github.com/sandgate/sandgate/nodes/reviewqueue"
	"github.com/sandgate/sandgate/nodes/workspace"
	"github.com/sandgate/sandgate/runtime"
)

// Review hands the verified change to people: an entry in a local review
// queue, or a GitHub pull request. Run again in the same run (the run was
// sent back and committed anew, or resumed after a crash) it updates the
// same entry or pull request. Without wait the harness ends at "review
// requested"; with wait the node waits for the decision (review_wait.go).
// What approving does (on_approve) is recorded for the person who decides.
type Review struct {
	queue, repo, base, baseURL, tokenEnv, dir string
	// allowed are the operator's URL prefixes for tokens (--allow-endpoint).
	allowed   []string
	onApprove *reviewqueue.ApproveAction
	wait      time.Duration
	// app mints the pull request's token instead of tokenEnv
	// (credentials: github_app).
	app *credential.AppConfig
}

var _ runtime.Node = (*Review)(nil)

// Type declares review nodes, whose local queue defaults to dir and
// whose token goes only to GitHub or an allowed API base. They run with
// the box held exclusively, as every promotion node does.
func Type(dir string, allowed []string) runtime.Type {
	return runtime.Type{Spec: blueprint.Configured[ReviewConfig](blueprint.NodeType{Name: "review", Stage: "promote", Doc: "hands the verified change to people: a local queue or a pull request",
		Outputs: map[string]blueprint.Kind{"url": blueprint.KindString, "id": blueprint.KindString, "decision": blueprint.KindString, "comments": blueprint.KindInt}}),
		New: gate.Quietly(func(spec *blueprint.Node) (runtime.Node, error) { return newReview(spec, allowed, dir) }, false)}
}

// newReview builds a review node whose local queue, unless the blueprint
// names one, is dir, else .sandgate/reviews.
func newReview(spec *blueprint.Node, allowed []string, dir string) (runtime.Node, error) {
	c, err := blueprint.Decode[ReviewConfig](spec)
	if err != nil {
		return nil, err
	}
	r := &Review{allowed: allowed, queue: c.Queue, repo: c.Repo, base: c.Base, baseURL: c.BaseURL, tokenEnv: c.TokenEnv, dir: c.Dir, wait: c.Wait}
	r.app, _ = credential.Parse(spec)
	if r.onApprove, err = reviewqueue.ParseOnApprove(c.Queue, c.OnApprove); err != nil {
		return nil, fmt.Errorf("on_approve: %w", err)
	}
	if r.dir == "" {
		r.dir = cmp.Or(dir, filepath.Join(".sandgate", "reviews"))
	}
	return r, nil
}

// handed is what a review handed over: the entry's directory (local
// queue, or a github review with on_approve), the pull request, and the
// wait's bounds.
type handed struct {
	// gh is the GitHub client of a github review.
	gh           *github.Client
	entryDir     string
	pr           *reviewqueue.PullRequest
	commit       string
	since, until time.Time
	outputs      map[string]any
	// clean makes the reviewers' text printable and free of the
	// harness's credentials, before any cut (see feedback.PlainText).
	clean func(string) string
}

// Run implements runtime.Node.
func (r *Review) Run(ctx context.Context, in *runtime.Input) (*runtime.Result, error) {
	pr, refused, err := promote.Start(in, true)
	if pr == nil {
		return refused, err
	}
	gh, lease, err := r.gitHub(ctx, in)
	if err != nil {
		return nil, err
	}
	defer lease.Done(in)
	h, err := r.handOver(ctx, in, pr, gh)
	if err != nil {
		return nil, lease.Err(err)
	}
	if r.wait <= 0 {
		h.outputs["decision"], h.outputs["comments"] = "pending", 0
		return &runtime.Result{Outcome: runtime.OutcomePass, Outputs: h.outputs}, nil
	}
	if r.queue == "github" {
		res, err := r.awaitGitHub(ctx, h)
		return res, lease.Err(err)
	}
	return r.awaitLocal(ctx, h)
}

// handOver queues the entry or opens the pull request, or updates the
// run's existing one, and records the wait's start in the run directory.
func (r *Review) handOver(ctx context.Context, in *runtime.Input, pr *promote.Promotable, gh *github.Client) (*handed, error) {
	w, c := pr.Workspace, pr.Commit
	pushes, err := promote.PushesOf(in)
	if err != nil {
		return nil, err
	}
	patch, err := w.PatchText(ctx, pr.Repo, plumbing.NewHash(c.Tree))
	if err != nil {
		return nil, err
	}
	title, err := in.Render("title")
	if err != nil {
		return nil, err
	}
	title = cmp.Or(title, c.Title)
	st, err := loadReviewState(w.RunDir, in.NodeID, c.Commit)
	if err != nil {
		return nil, err
	}
	h := &handed{gh: gh, commit: c.Commit, since: st.WaitSince, until: st.WaitSince.Add(r.wait), outputs: map[string]any{"id": w.RunID},
		clean: func(s string) string { return in.Redactor.String(feedback.PlainText(s)) }}
	verify, _ := os.ReadFile(filepath.Join(w.RunDir, "verify.json"))
	body := reviewBody(w, c, title, verify)
	entry := reviewqueue.Entry{ID: w.RunID, Title: title, Branch: c.Branch, Commit: c.Commit, Base: w.Base,
		RunDir: w.RunDir, Status: reviewqueue.StatusPending, Created: time.Now().UTC(), DeleteOnReject: pushes.DeleteOnReject(),
		AgentSummary: reviewqueue.AgentSummary(w.RunDir), Ignored: c.Ignored, IgnoredCount: c.IgnoredCount}
	if r.wait > 0 {
		entry.Waiting, entry.WaitSince, entry.WaitUntil = r.queue == "local", h.since, h.until
	}
	if entry.OnApprove, err = r.approveAction(w); err != nil {
		return nil, err
	}
	if r.queue == "github" {
		if h.pr, err = r.pullRequest(ctx, gh, c, title, body, st.PullRequest); err != nil {
			return nil, err
		}
		entry.PullRequest, st.PullRequest = h.pr, h.pr.Number
		h.outputs["url"], h.outputs["id"] = h.pr.URL, fmt.Sprint(h.pr.Number)
	}
	if err := st.save(); err != nil {
		return nil, fmt.Errorf("record the review's state: %w", err)
	}
	if r.queue == "github" && entry.OnApprove == nil {
		return h, nil // without on_approve the pull request is the whole review
	}
	files := map[string][]byte{"diff.patch": []byte(patch), "verify.json": verify, "summary.md": []byte(body)}
	if _, h.entryDir, err = reviewqueue.Upsert(filepath.Join(r.dir, w.RunID), entry, files, w.Redactor().Bytes); err != nil {
		return nil, err
	}
	if r.queue == "local" {
		h.outputs["url"] = h.entryDir
	}
	return h, nil
}

// approveAction is on_approve completed from what the run did: a local
// queue lands the change on the remote the run pushed to, unless
// on_approve names another.
func (r *Review) approveAction(w *workspace.Workspace) (*reviewqueue.ApproveAction, error) {
	if r.onApprove == nil || r.queue == "github" {
		return r.onApprove, nil
	}
	a := *r.onApprove
	// push.json, not memory: a resumed run still knows where it pushed.
	last, err := promote.LastPush(w.RunDir)
	pushed := err == nil
	switch {
	case a.Remote == "" && !pushed:
		return nil, errors.New("on_approve: no remote to merge into: name one (on_approve.remote) or push the branch with a git_push node before the review")
	case a.Remote == "":
		a.Remote, a.TokenEnv, a.Credentials = last.Remote, last.TokenEnv, last.Credentials
	case pushed && a.Remote == last.Remote:
		a.TokenEnv, a.Credentials = last.TokenEnv, last.Credentials
	}
	return &a, nil
}

// runSpent is what the run's finished attempts spent, from its journal.
func runSpent(runDir string) (tokens int, usd float64) {
	evs, _ := runtime.ReadJournal(filepath.Join(runDir, "events.jsonl"))
	for _, ev := range evs {
		if ev.Type == runtime.EvNodeFinished {
			tokens, usd = tokens+ev.Tokens, usd+ev.Cost
		}
	}
	return tokens, usd
}

// reviewBody is summary.md, a pull request's body. Its headings and
// sentences are the harness's; what a run or the box named (the title a
// template rendered, file names, the verdict's test names) is quoted
// through termtext, so it cannot add a heading, a link or an escape.
func reviewBody(w *workspace.Workspace, c *promote.Committed, title string, verify []byte) string {
	var b strings.Builder
	fmt.Fprintf(&b, "## %s\n\nProposed by sandgate run %s on branch %s (commit `%s`, base `%s`).\n\n", termtext.Line(title),
		termtext.Code(w.RunID), termtext.Code(c.Branch), c.Commit[:12], w.Base[:12])
	fmt.Fprintf(&b, "### Verification verdict\n\n%s\n\n", termtext.Fence("json", strings.TrimSpace(string(verify))))
	if c.IgnoredCount > 0 {
		// The box wrote them, .gitignore kept them out of the commit: a
		// reviewer should know the change was tested with them present.
		names := make([]string, len(c.Ignored))
		for i, n := range c.Ignored {
			names[i] = termtext.Code(n)
		}
		fmt.Fprintf(&b, "### Left out of the commit\n\n%d file(s) the repository's .gitignore matches were written in the sandbox and not committed: %s",
			c.IgnoredCount, strings.Join(names, ", "))
		if more := c.IgnoredCount - len(c.Ignored); more > 0 {
			fmt.Fprintf(&b, " and %d more", more)
		}
		b.WriteString(".\n\n")
	}
	fmt.Fprintf(&b, "### Evidence\n\n- run directory: %s\n- timeline: %s\n- trace: %s\n- commands run in the sandbox: %s\n",
		termtext.Code(w.RunDir), termtext.Code("sandgate show "+w.RunDir), termtext.Code(filepath.Join(w.RunDir, "trace.json")), termtext.Code(filepath.Join(w.RunDir, "commands.jsonl")))
	tokens, usd := runSpent(w.RunDir)
	fmt.Fprintf(&b, "- spent by the run so far: %d tokens, cost: $%.4f\n", tokens, usd)
	b.WriteString("\nThe harness stops here: merging is a person's decision.\n")
	return b.String()
}
