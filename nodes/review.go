package nodes

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/sandgate/sandgate/blueprint"
	"github.com/sandgate/sandgate/runtime"
)

// Review hands the verified change to people: an entry in a local review
// queue, or a GitHub pull request. The harness ends at "review requested",
// never at merge.
type Review struct {
	queue, repo, base, baseURL, tokenEnv, dir string
	// allowed are the operator's URL prefixes for tokens (--allow-endpoint).
	allowed []string
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
	if r.queue == "github" {
		return r.pullRequest(ctx, c, title, body)
	}
	dir := filepath.Join(r.dir, w.RunID)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	entry := ReviewEntry{ID: w.RunID, Title: title, Branch: c.Branch, Commit: c.Commit, Base: w.Base,
		RunDir: w.RunDir, Status: "pending", Created: time.Now().UTC(), DeleteOnReject: w.pushes()}
	files := map[string][]byte{"diff.patch": []byte(patch), "verify.json": verify, "summary.md": []byte(body), "entry.json": mustJSON(entry)}
	for name, data := range files {
		if err := writeFileAtomic(filepath.Join(dir, name), w.redact.Bytes(data)); err != nil {
			return nil, err
		}
	}
	abs, _ := filepath.Abs(dir)
	return &runtime.Result{Outcome: runtime.OutcomePass, Outputs: map[string]any{"url": abs, "id": w.RunID}}, nil
}

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
	Note    string    `json:"note,omitempty"`
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

func (r *Review) pullRequest(ctx context.Context, c *committed, title, body string) (*runtime.Result, error) {
	// The loader checked base_url too; this holds for blueprints that did
	// not come through it, before any connection.
	if err := r.checkURL(r.baseURL); err != nil {
		return nil, fmt.Errorf("review base_url: %w", err)
	}
	tok := os.Getenv(r.tokenEnv)
	if tok == "" {
		return nil, fmt.Errorf("review queue github: %s is not set in the harness environment", r.tokenEnv)
	}
	payload, _ := json.Marshal(map[string]any{"title": title, "head": c.Branch, "base": r.base, "body": body, "draft": false})
	url := strings.TrimRight(r.baseURL, "/") + "/repos/" + r.repo + "/pulls"
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(payload))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+tok)
	req.Header.Set("Accept", "application/vnd.github+json")
	req.Header.Set("X-GitHub-Api-Version", "2022-11-28")
	req.Header.Set("Content-Type", "application/json")
	resp, err := (&http.Client{Timeout: 60 * time.Second, CheckRedirect: r.checkRedirect}).Do(req)
	if err != nil {
		return nil, fmt.Errorf("create pull request: %w", err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	var out struct {
		HTMLURL string `json:"html_url"`
		Number  int    `json:"number"`
		Message string `json:"message"`
		Errors  []struct {
			Message string `json:"message"`
		} `json:"errors"`
	}
	_ = json.Unmarshal(data, &out)
	if resp.StatusCode != http.StatusCreated {
		msg := out.Message
		for _, e := range out.Errors {
			msg += "; " + e.Message
		}
		if resp.StatusCode == http.StatusUnprocessableEntity && strings.Contains(msg, "already exists") {
			return &runtime.Result{Outcome: runtime.OutcomePass, Outputs: map[string]any{"url": "", "id": "existing"}, Feedback: msg}, nil
		}
		return nil, fmt.Errorf("create pull request: %s: %s", resp.Status, msg)
	}
	return &runtime.Result{Outcome: runtime.OutcomePass, Outputs: map[string]any{"url": out.HTMLURL, "id": fmt.Sprint(out.Number)}}, nil
}

// checkURL refuses to send the token to url unless it is GitHub's API or
// under a prefix the operator allowed.
func (r *Review) checkURL(url string) error {
	return blueprint.CheckEndpoint(spec("review").Fields["base_url"], url, r.allowed)
}

// checkRedirect follows a redirect only to a URL the token may go to: Go
// drops the Authorization header only on a redirect to another domain, not
// to a subdomain or another path.
func (r *Review) checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) >= 10 {
		return errors.New("stopped after 10 redirects")
	}
	if err := r.checkURL(req.URL.String()); err != nil {
		return fmt.Errorf("redirect: %w", err)
	}
	return nil
}

func mustJSON(v any) []byte {
	b, _ := json.MarshalIndent(v, "", "  ")
	return append(b, '\n')
}
