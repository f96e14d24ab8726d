package reviewqueue

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"

	"github.com/sandgate/sandgate/nodes/internal/credential"
	"github.com/sandgate/sandgate/nodes/internal/github"
)

// approvePullRequest does what the entry's on_approve asks of its pull
// request and returns the merge commit when it merged.
func (q *Queue) approvePullRequest(ctx context.Context, e *Entry, note, by string) (string, error) {
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
	if pr.Credentials != nil {
		// A token minted for this one action on this one repository,
		// revoked once it is done; a failed revocation stays in the
		// entry's ledger for the next action on it.
		lease, err := credential.Borrow(ctx, pr.Credentials.WithBase(pr.BaseURL), q.AllowEndpoints, approvePurpose(e.OnApprove.GitHub), pr.Repo, filepath.Join(q.Dir, e.ID), "approve", nil)
		if err != nil {
			return "", fmt.Errorf("%s: %w", what, err)
		}
		defer lease.Close()
		gh.Token = lease.Token
		sha, err := q.sendPullRequestAction(ctx, gh, e, what, method, url, payload)
		return sha, lease.Err(err)
	}
	return q.sendPullRequestAction(ctx, gh, e, what, method, url, payload)
}

// approvePurpose is what a token for on_approve's github action needs.
func approvePurpose(action string) credential.Purpose {
	if action == "merge" {
		return credential.Merge
	}
	return credential.Review
}

func (q *Queue) sendPullRequestAction(ctx context.Context, gh *github.Client, e *Entry, what, method, url string, payload any) (string, error) {
	status, data, err := gh.Send(ctx, method, url, payload)
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
func prAction(e *Entry, note, by string) (method, url string, payload any, err error) {
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
