package review

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/sandgate/sandgate/nodes/internal/github"
	"github.com/sandgate/sandgate/nodes/internal/promote"
	"github.com/sandgate/sandgate/nodes/reviewqueue"
)

// ghPull is the part of GitHub's pull request payload the node reads.
type ghPull struct {
	github.APIError
	HTMLURL string `json:"html_url"`
	Number  int    `json:"number"`
	NodeID  string `json:"node_id"`
	Draft   bool   `json:"draft"`
}

func (r *Review) gitHub() *github.Client {
	return github.FromEnv(r.baseURL, r.tokenEnv, r.allowed)
}

// pullRequest opens the pull request, as a draft when approving is to mark
// it ready for review; or, when this run already opened one (known, from
// the run directory) or GitHub says one exists for the branch (a retried
// creation), finds that one and updates its title and body.
func (r *Review) pullRequest(ctx context.Context, c *promote.Committed, title, body string, known int) (*reviewqueue.PullRequest, error) {
	gh := r.gitHub()
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
	return &reviewqueue.PullRequest{Repo: r.repo, Number: p.Number, NodeID: p.NodeID, URL: p.HTMLURL, BaseURL: r.baseURL, TokenEnv: r.tokenEnv, Draft: draft}
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
