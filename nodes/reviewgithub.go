package nodes

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/sandgate/sandgate/blueprint"
)

// gitHub talks to GitHub's API (or an Enterprise server's) with a token
// that goes only to GitHub or under a prefix the operator allowed, on the
// first request and on every redirect.
type gitHub struct {
	baseURL, tokenEnv string
	allowed           []string
}

// apiError is GitHub's error payload.
type apiError struct {
	Message string `json:"message"`
	Errors  []struct {
		Message string `json:"message"`
	} `json:"errors"`
}

func (e apiError) String() string {
	msg := e.Message
	for _, x := range e.Errors {
		msg += "; " + x.Message
	}
	return msg
}

// ghReply is one answer from GitHub.
type ghReply struct {
	status int
	body   []byte
	header http.Header
}

// do sends payload as JSON to path under the base URL (or to url itself
// when path starts with http) and returns the status and body.
func (g *gitHub) do(ctx context.Context, method, path string, payload any) (int, []byte, error) {
	r, err := g.call(ctx, method, path, payload)
	if err != nil {
		return 0, nil, err
	}
	return r.status, r.body, nil
}

// call is do with the answer's headers; a nil payload sends no body.
func (g *gitHub) call(ctx context.Context, method, path string, payload any) (*ghReply, error) {
	target, checked := path, path
	if !strings.HasPrefix(path, "http") {
		target, checked = strings.TrimRight(g.baseURL, "/")+path, g.baseURL
	}
	// The loader checked a blueprint's base_url; this holds for nodes that
	// did not come through it and for a queue entry someone edited,
	// before any connection.
	for _, u := range []string{checked, target} {
		if err := checkGitHubURL(u, g.allowed); err != nil {
			return nil, fmt.Errorf("review base_url: %w", err)
		}
	}
	tok := os.Getenv(g.tokenEnv)
	if tok == "" {
		return nil, fmt.Errorf("review queue github: %s is not set in this environment", g.tokenEnv)
	}
	var body io.Reader
	if payload != nil {
		b, _ := json.Marshal(payload)
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, target, body)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+tok)
	req.Header.Set("Accept", "application/vnd.github+json")
	req.Header.Set("X-GitHub-Api-Version", "2022-11-28")
	if payload != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	client := &http.Client{Timeout: 60 * time.Second, CheckRedirect: func(req *http.Request, via []*http.Request) error {
		return checkRedirect(req, via, g.allowed)
	}}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return &ghReply{status: resp.StatusCode, body: data, header: resp.Header}, err
}

// ghPull is the part of GitHub's pull request payload the node reads.
type ghPull struct {
	apiError
	HTMLURL string `json:"html_url"`
	Number  int    `json:"number"`
	NodeID  string `json:"node_id"`
	Draft   bool   `json:"draft"`
}

func (r *Review) gitHub() *gitHub {
	return &gitHub{baseURL: r.baseURL, tokenEnv: r.tokenEnv, allowed: r.allowed}
}

// pullRequest opens the pull request, as a draft when approving is to mark
// it ready for review; or, when this run already opened one (known, from
// the run directory) or GitHub says one exists for the branch (a retried
// creation), finds that one and updates its title and body.
func (r *Review) pullRequest(ctx context.Context, c *committed, title, body string, known int) (*PullRequest, error) {
	gh := r.gitHub()
	if known > 0 {
		if pr, err := r.findPullRequest(ctx, gh, c.Branch); err != nil || pr != nil {
			return r.updatePullRequest(ctx, gh, pr, title, body, err)
		}
	}
	draft := r.onApprove != nil && r.onApprove.GitHub == "ready"
	payload := map[string]any{"title": title, "head": c.Branch, "base": r.base, "body": body, "draft": draft}
	status, data, err := gh.do(ctx, http.MethodPost, "/repos/"+r.repo+"/pulls", payload)
	if err != nil {
		return nil, fmt.Errorf("create pull request: %w", err)
	}
	var out ghPull
	_ = json.Unmarshal(data, &out)
	if status == http.StatusUnprocessableEntity && strings.Contains(out.apiError.String(), "already exists") {
		pr, err := r.findPullRequest(ctx, gh, c.Branch)
		if err == nil && pr == nil {
			err = fmt.Errorf("GitHub says %q, yet lists no open pull request from %s", out.apiError.String(), c.Branch)
		}
		return r.updatePullRequest(ctx, gh, pr, title, body, err)
	}
	if status != http.StatusCreated {
		return nil, fmt.Errorf("create pull request: %d %s: %s", status, http.StatusText(status), out.apiError.String())
	}
	return r.recordPull(out, draft), nil
}

func (r *Review) recordPull(p ghPull, draft bool) *PullRequest {
	return &PullRequest{Repo: r.repo, Number: p.Number, NodeID: p.NodeID, URL: p.HTMLURL, BaseURL: r.baseURL, TokenEnv: r.tokenEnv, Draft: draft}
}

// findPullRequest is the open pull request from branch (in the same
// repository) into the base branch; nil when there is none.
func (r *Review) findPullRequest(ctx context.Context, gh *gitHub, branch string) (*PullRequest, error) {
	owner, _, _ := strings.Cut(r.repo, "/")
	q := url.Values{"head": {owner + ":" + branch}, "base": {r.base}, "state": {"open"}}
	status, data, err := gh.do(ctx, http.MethodGet, "/repos/"+r.repo+"/pulls?"+q.Encode(), nil)
	if err != nil {
		return nil, fmt.Errorf("find the pull request from %s: %w", branch, err)
	}
	var pulls []ghPull
	if status != http.StatusOK || json.Unmarshal(data, &pulls) != nil {
		var e apiError
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
func (r *Review) updatePullRequest(ctx context.Context, gh *gitHub, pr *PullRequest, title, body string, err error) (*PullRequest, error) {
	if err != nil {
		return nil, err
	}
	path := fmt.Sprintf("/repos/%s/pulls/%d", r.repo, pr.Number)
	status, data, err := gh.do(ctx, http.MethodPatch, path, map[string]any{"title": title, "body": body})
	if err != nil {
		return nil, fmt.Errorf("update pull request #%d: %w", pr.Number, err)
	}
	if status != http.StatusOK {
		var e apiError
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
	gh := &gitHub{baseURL: pr.BaseURL, tokenEnv: pr.TokenEnv, allowed: q.AllowEndpoints}
	status, data, err := gh.do(ctx, method, url, payload)
	if err != nil {
		return "", fmt.Errorf("%s: %w", what, err)
	}
	var out struct {
		apiError
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
		return "", fmt.Errorf("%s: %d %s: %s", what, status, http.StatusText(status), out.apiError.String())
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

// checkGitHubURL refuses to send the token to url unless it is GitHub's
// API or under a prefix the operator allowed.
func checkGitHubURL(url string, allowed []string) error {
	return blueprint.CheckEndpoint(spec("review").Fields["base_url"], url, allowed)
}

// checkRedirect follows a redirect only to a URL the token may go to: Go
// drops the Authorization header only on a redirect to another domain, not
// to a subdomain, another port or another path.
func checkRedirect(req *http.Request, via []*http.Request, allowed []string) error {
	if len(via) >= 10 {
		return errors.New("stopped after 10 redirects")
	}
	if err := checkGitHubURL(req.URL.String(), allowed); err != nil {
		return fmt.Errorf("redirect: %w", err)
	}
	return nil
}
