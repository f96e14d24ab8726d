package nodes

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/sandgate/sandgate/nodes/internal/github"
	"github.com/sandgate/sandgate/nodes/internal/promote"
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
func (r *Review) pullRequest(ctx context.Context, c *promote.Committed, title, body string, known int) (*PullRequest, error) {
	gh := r.gitHub()
	if known > 0 {
		if pr, err := r.findPullRequest(ctx, gh, c.Branch); err != nil || pr != nil {
			return r.updatePullRequest(ctx, gh, pr, title, body, err)
		}
	}
	draft := r.onApprove != nil && r.onApprove.GitHub == "ready"
	payload := map[string]any{"title": title, "head": c.Branch, "base": r.base, "body": body, "draft": draft}
	status, data, err := send(ctx, gh, http.MethodPost, "/repos/"+r.repo+"/pulls", payload)
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

func (r *Review) recordPull(p ghPull, draft bool) *PullRequest {
	return &PullRequest{Repo: r.repo, Number: p.Number, NodeID: p.NodeID, URL: p.HTMLURL, BaseURL: r.baseURL, TokenEnv: r.tokenEnv, Draft: draft}
}

// findPullRequest is the open pull request from branch (in the same
// repository) into the base branch; nil when there is none.
func (r *Review) findPullRequest(ctx context.Context, gh *github.Client, branch string) (*PullRequest, error) {
	owner, _, _ := strings.Cut(r.repo, "/")
	q := url.Values{"head": {owner + ":" + branch}, "base": {r.base}, "state": {"open"}}
	status, data, err := send(ctx, gh, http.MethodGet, "/repos/"+r.repo+"/pulls?"+q.Encode(), nil)
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
func (r *Review) updatePullRequest(ctx context.Context, gh *github.Client, pr *PullRequest, title, body string, err error) (*PullRequest, error) {
	if err != nil {
		return nil, err
	}
	path := fmt.Sprintf("/repos/%s/pulls/%d", r.repo, pr.Number)
	status, data, err := send(ctx, gh, http.MethodPatch, path, map[string]any{"title": title, "body": body})
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

// approvePullRequest does what the entry's on_approve asks of its pull
// request and returns the merge commit when it merged.
func (q *ReviewQueue) approvePullRequest(ctx context.Context, e *ReviewEntry, note, by string) (string, error) {
	pr := e.PullRequest
	if pr == nil || pr.Number <= 0 || !strings.Contains(pr.Repo, "/") {
		return "", fmt.Errorf("entry %s records no pull request to act on", e.ID)
	}
	method, url, payload, err := prAction(e, note, by)
	if err != nil {
		return "", err
	}
	what := fmt.Sprintf("%s pull request %s#%d", e.OnApprove.GitHub, pr.Repo, pr.Number)
	gh := github.FromEnv(pr.BaseURL, pr.TokenEnv, q.AllowEndpoints)
	status, data, err := send(ctx, gh, method, url, payload)
	if err != nil {
		return "", fmt.Errorf("%s: %w", what, err)
	}
	var out struct {
		github.APIError
		SHA    string `json:"sha"`
		Merged bool   `json:"merged"`
		Data   *struct {
			Mark *struct {
				PullRequest struct {
					IsDraft bool `json:"isDraft"`
				} `json:"pullRequest"`
			} `json:"markPullRequestReadyForReview"`
		} `json:"data"`
	}
	_ = json.Unmarshal(data, &out)
	switch {
	case status < 200 || status > 299:
		return "", fmt.Errorf("%s: %d %s: %s", what, status, http.StatusText(status), out.APIError.String())
	case e.OnApprove.GitHub == "merge" && !out.Merged:
		return "", fmt.Errorf("%s: not merged: %s", what, out.Message)
	case e.OnApprove.GitHub == "ready" && (out.Data == nil || out.Data.Mark == nil || out.Data.Mark.PullRequest.IsDraft):
		return "", fmt.Errorf("%s: GraphQL did not mark it ready: %s", what, graphQLErrors(data))
	}
	return out.SHA, nil
}

// prAction is the request that carries out on_approve on a pull request.
func prAction(e *ReviewEntry, note, by string) (method, url string, payload any, err error) {
	pr := e.PullRequest
	path := fmt.Sprintf("/repos/%s/pulls/%d", pr.Repo, pr.Number)
	// The reviewed commit pins what is approved or merged; without a full
	// object id GitHub would take the pull request's head as it is now.
	if a := e.OnApprove.GitHub; (a == "approve" || a == "merge") && !objectID(e.Commit) {
		return "", "", nil, fmt.Errorf("entry %s: commit %q is not a full object id: it cannot pin what is %sd on pull request #%d", e.ID, e.Commit, a, pr.Number)
	}
	switch a := e.OnApprove; a.GitHub {
	case "approve":
		body := strings.TrimSpace(fmt.Sprintf("Approved by %s in the sandgate review queue. %s", by, note))
		// commit_id: the approval is of the commit that was reviewed.
		return http.MethodPost, path + "/reviews", map[string]any{"event": "APPROVE", "commit_id": e.Commit, "body": body}, nil
	case "merge":
		// sha: GitHub refuses (409) if the head moved past the reviewed commit.
		return http.MethodPut, path + "/merge", map[string]any{"merge_method": a.MergeMethod, "sha": e.Commit,
			"commit_title": fmt.Sprintf("%s (#%d)", e.Title, pr.Number), "commit_message": approvedBy(by, note)}, nil
	case "ready":
		if pr.NodeID == "" {
			return "", "", nil, fmt.Errorf("entry %s records no node_id for pull request #%d, which marking it ready needs", e.ID, pr.Number)
		}
		// REST cannot take a pull request out of draft (its update
		// endpoint has no draft field); GraphQL can.
		return http.MethodPost, graphQLURL(pr.BaseURL), map[string]any{
			"query":     "mutation($id: ID!) { markPullRequestReadyForReview(input: {pullRequestId: $id}) { pullRequest { isDraft } } }",
			"variables": map[string]any{"id": pr.NodeID}}, nil
	}
	return "", "", nil, fmt.Errorf("entry %s: unknown on_approve github action %q", e.ID, e.OnApprove.GitHub)
}

// graphQLURL is the GraphQL endpoint beside a REST base URL: GitHub's
// api.github.com/graphql, an Enterprise server's /api/graphql beside
// /api/v3.
func graphQLURL(base string) string {
	base = strings.TrimRight(base, "/")
	if b, ok := strings.CutSuffix(base, "/api/v3"); ok {
		return b + "/api/graphql"
	}
	return base + "/graphql"
}

func graphQLErrors(data []byte) string {
	var out struct {
		Errors []struct {
			Message string `json:"message"`
		} `json:"errors"`
	}
	_ = json.Unmarshal(data, &out)
	var msgs []string
	for _, e := range out.Errors {
		msgs = append(msgs, e.Message)
	}
	return strings.Join(msgs, "; ")
}

// send is one request to GitHub: the answer's status and body.
func send(ctx context.Context, gh *github.Client, method, path string, payload any) (int, []byte, error) {
	r, err := gh.Do(ctx, method, path, payload)
	if err != nil {
		return 0, nil, err
	}
	return r.Status, r.Body, nil
}
