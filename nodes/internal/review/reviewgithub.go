package review

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/sandgate/sandgate/nodes/internal/alert"
	"github.com/sandgate/sandgate/nodes/internal/credential"
	"github.com/sandgate/sandgate/nodes/internal/github"
	"github.com/sandgate/sandgate/nodes/internal/promote"
	"github.com/sandgate/sandgate/nodes/reviewqueue"
	"github.com/sandgate/sandgate/runtime"
)

// ghPull is the part of GitHub's pull request payload the node reads.
type ghPull struct {
	github.APIError
	HTMLURL string `json:"html_url"`
	Number  int    `json:"number"`
	NodeID  string `json:"node_id"`
	Draft   bool   `json:"draft"`
}

// gitHub is the client of a github review: its token from token_env, or
// minted for the review's repository (credentials), whose lease the
// caller closes (Done on a nil lease does nothing). A local review has
// neither.
func (r *Review) gitHub(ctx context.Context, in *runtime.Input) (*github.Client, *credential.Lease, error) {
	if r.queue != "github" {
		return nil, nil, nil
	}
	alert.Elsewhere(in, alert.KindForeignReview, r.repo, "review is opening a pull request on "+r.repo+", a repository other than the run's")
	if r.app == nil {
		return github.FromEnv(r.baseURL, r.tokenEnv, r.allowed), nil, nil
	}
	// The loader checked a literal base_url; this holds for nodes built
	// without it, before a JWT goes anywhere.
	if err := github.CheckURL(r.baseURL, r.allowed); err != nil {
		return nil, nil, fmt.Errorf("review base_url: %w", err)
	}
	lease, err := credential.NewLease(ctx, in, r.app.WithBase(r.baseURL), r.allowed, credential.Review, r.repo)
	if err != nil {
		return nil, nil, err
	}
	gh := github.FromEnv(r.baseURL, "", r.allowed)
	gh.Token = lease.Token
	return gh, lease, nil
}

// pullRequest opens the pull request, as a draft when approving is to mark
// it ready for review; or, when this run already opened one (known, from
// the run directory) or GitHub says one exists for the branch (a retried
// creation), finds that one and updates its title and body.
func (r *Review) pullRequest(ctx context.Context, gh *github.Client, c *promote.Committed, title, body string, known int) (*reviewqueue.PullRequest, error) {
	if known > 0 {
		if pr, err := r.findPullRequest(ctx, gh, c.Branch); err != nil || pr != nil {
			return r.updatePullRequest(ctx, gh, pr, title, body, err)
		}
	}
	draft := r.onApprove != nil && r.onApprove.GitHub == "ready"
	payload := map[string]any{"title": title, "head": c.Branch, "base": r.base, "body": body, "draft": draft}
	status, data, err := gh.Send(ctx, http.MethodPost, "/repos/"+r.repo+"/pulls", payload)
	if err != nil {
		return nil, fmt.Errorf("create pull request: %w", err)
	}
	var out ghPull
	_ = json.Unmarshal(data, &out)
	if status == http.StatusUnprocessableEntity && strings.Contains(out.APIError.String(), "already exists") {
		pr, err := r.findPullRequest(ctx, gh, c.Branch)
		if err == nil && pr == nil {
			err = fmt.Errorf("GitHub says %q, yet lists no open pull request from %s", out.APIError.String(), c.Branch)
		}
		return r.updatePullRequest(ctx, gh, pr, title, body, err)
	}
	if status != http.StatusCreated {
		return nil, fmt.Errorf("create pull request: %d %s: %s", status, http.StatusText(status), out.APIError.String())
	}
	return r.recordPull(out, draft), nil
}

func (r *Review) recordPull(p ghPull, draft bool) *reviewqueue.PullRequest {
	tokenEnv := r.tokenEnv
	if r.app != nil {
		// token_env's default names the operator's token, which an
		// approval must not fall back to: it mints its own.
		tokenEnv = ""
	}
	return &reviewqueue.PullRequest{Repo: r.repo, Number: p.Number, NodeID: p.NodeID, URL: p.HTMLURL, BaseURL: r.baseURL, TokenEnv: tokenEnv, Credentials: r.app, Draft: draft}
}

// findPullRequest is the open pull request from branch (in the same
// repository) into the base branch; nil when there is none.
func (r *Review) findPullRequest(ctx context.Context, gh *github.Client, branch string) (*reviewqueue.PullRequest, error) {
	owner, _, _ := strings.Cut(r.repo, "/")
	q := url.Values{"head": {owner + ":" + branch}, "base": {r.base}, "state": {"open"}}
	status, data, err := gh.Send(ctx, http.MethodGet, "/repos/"+r.repo+"/pulls?"+q.Encode(), nil)
	if err != nil {
		return nil, fmt.Errorf("find the pull request from %s: %w", branch, err)
	}
	var pulls []ghPull
	if status != http.StatusOK || json.Unmarshal(data, &pulls) != nil {
		var e github.APIError
		_ = json.Unmarshal(data, &e)
		return nil, fmt.Errorf("find the pull request from %s: %d %s: %s", branch, status, http.StatusText(status), e.String())
	}
	if len(pulls) == 0 {
		return nil, nil
	}
	return r.recordPull(pulls[0], pulls[0].Draft), nil
}

// updatePullRequest gives the run's pull request the new commit's title
// and body; GitHub shows the new commits already (they were pushed).
func (r *Review) updatePullRequest(ctx context.Context, gh *github.Client, pr *reviewqueue.PullRequest, title, body string, err error) (*reviewqueue.PullRequest, error) {
	if err != nil {
		return nil, err
	}
	path := fmt.Sprintf("/repos/%s/pulls/%d", r.repo, pr.Number)
	status, data, err := gh.Send(ctx, http.MethodPatch, path, map[string]any{"title": title, "body": body})
	if err != nil {
		return nil, fmt.Errorf("update pull request #%d: %w", pr.Number, err)
	}
	if status != http.StatusOK {
		var e github.APIError
		_ = json.Unmarshal(data, &e)
		return nil, fmt.Errorf("update pull request #%d: %d %s: %s", pr.Number, status, http.StatusText(status), e.String())
	}
	return pr, nil
}
