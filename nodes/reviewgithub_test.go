package nodes_test

import (
	"cmp"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sandgate/sandgate/nodes"
	"github.com/sandgate/sandgate/runtime"
)

// ghPull7 is pull request 7 as GitHub's create, get and list answer it.
const ghPull7 = `{"id":1,"node_id":"` + ghNodeID + `","number":7,"html_url":"https://github.com/acme/calc/pull/7","state":"open","draft":true,"head":{"ref":"fix/add","sha":"` + ghHead + `"},"base":{"ref":"main"}}`

const (
	ghHead   = "6dcb09b5b57875f334f61aebed695e2e4193db5e"
	ghMerged = "e5bd3914e2e596debea16f433f57875b5b90bcd6"
	ghNodeID = "PR_kwDOABCD1234"
)

// ghRequest is one request the GitHub double saw.
type ghRequest struct {
	Method, Path, Query, Auth string
	Body                      map[string]any
}

// gitHubDouble answers like GitHub's REST and GraphQL APIs for pull
// request 7 of acme/calc, with the payloads GitHub documents, and checks
// the token. redirect, when set, answers every request with a 307 there.
type gitHubDouble struct {
	*httptest.Server
	mu       sync.Mutex
	reqs     []ghRequest
	redirect string
	// mergeStatus overrides the merge endpoint's answer (405, 409).
	mergeStatus int
	// exists makes creating pull request 7 answer 422 "already exists";
	// open lists it as the open pull request from fix/add (creating it
	// opens it).
	exists, open bool
	// reviews and comments answer the pull request's reviews and review
	// comments; limited is how many reviews polls get 429 Retry-After: 30
	// first.
	reviews  func() string
	comments string
	limited  int
}

func newGitHubDouble(t *testing.T) *gitHubDouble {
	g := &gitHubDouble{}
	g.Server = httptest.NewServer(http.HandlerFunc(g.serve))
	t.Cleanup(g.Close)
	return g
}

func (g *gitHubDouble) seen() []ghRequest {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]ghRequest(nil), g.reqs...)
}

func (g *gitHubDouble) serve(w http.ResponseWriter, r *http.Request) {
	req := ghRequest{Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery, Auth: r.Header.Get("Authorization")}
	_ = json.NewDecoder(r.Body).Decode(&req.Body)
	g.mu.Lock()
	defer g.mu.Unlock()
	g.reqs = append(g.reqs, req)
	w.Header().Set("Content-Type", "application/json")
	reply := func(status int, body string) { w.WriteHeader(status); io.WriteString(w, body) }
	switch {
	case g.redirect != "":
		http.Redirect(w, r, g.redirect+r.URL.Path, http.StatusTemporaryRedirect)
	case req.Auth != "Bearer gh-secret":
		reply(http.StatusUnauthorized, `{"message":"Bad credentials","documentation_url":"https://docs.github.com/rest"}`)
	case r.Method == http.MethodPost && r.URL.Path == "/repos/acme/calc/pulls" && (g.exists || g.open):
		reply(http.StatusUnprocessableEntity, `{"message":"Validation Failed","errors":[{"resource":"PullRequest","code":"custom","message":"A pull request already exists for acme:fix/add."}],"documentation_url":"https://docs.github.com/rest/pulls/pulls#create-a-pull-request","status":"422"}`)
	case r.Method == http.MethodPost && r.URL.Path == "/repos/acme/calc/pulls":
		g.open = true
		reply(http.StatusCreated, ghPull7)
	case r.Method == http.MethodGet && r.URL.Path == "/repos/acme/calc/pulls":
		if q := r.URL.Query(); (g.exists || g.open) && q.Get("head") == "acme:fix/add" && q.Get("state") == "open" {
			reply(http.StatusOK, "["+ghPull7+"]")
			return
		}
		reply(http.StatusOK, `[]`)
	case r.Method == http.MethodPatch && r.URL.Path == "/repos/acme/calc/pulls/7":
		reply(http.StatusOK, ghPull7)
	case r.Method == http.MethodGet && r.URL.Path == "/repos/acme/calc/pulls/7/reviews" && g.limited > 0:
		g.limited--
		w.Header().Set("Retry-After", "30")
		reply(http.StatusTooManyRequests, `{"message":"You have exceeded a secondary rate limit. Please wait a few minutes before you try again.","documentation_url":"https://docs.github.com/rest/overview/rate-limits-for-the-rest-api"}`)
	case r.Method == http.MethodGet && r.URL.Path == "/repos/acme/calc/pulls/7/reviews" && g.reviews != nil:
		reply(http.StatusOK, g.reviews())
	case r.Method == http.MethodGet && r.URL.Path == "/repos/acme/calc/pulls/7/comments":
		reply(http.StatusOK, cmp.Or(g.comments, "[]"))
	case r.Method == http.MethodPost && r.URL.Path == "/repos/acme/calc/pulls/7/reviews" && req.Body["event"] == "APPROVE":
		reply(http.StatusOK, `{"id":80,"node_id":"MDE3OlB1bGxSZXF1ZXN0UmV2aWV3ODA=","body":"","state":"APPROVED","html_url":"https://github.com/acme/calc/pull/7#pullrequestreview-80","commit_id":"`+ghHead+`","submitted_at":"2019-11-17T17:43:43Z"}`)
	case r.Method == http.MethodPut && r.URL.Path == "/repos/acme/calc/pulls/7/merge" && g.mergeStatus == http.StatusMethodNotAllowed:
		reply(g.mergeStatus, `{"message":"Pull Request is not mergeable","documentation_url":"https://docs.github.com/rest/pulls/pulls#merge-a-pull-request"}`)
	case r.Method == http.MethodPut && r.URL.Path == "/repos/acme/calc/pulls/7/merge" && req.Body["sha"] != ghHead:
		reply(http.StatusConflict, `{"message":"Head branch was modified. Review and try the merge again.","documentation_url":"https://docs.github.com/rest/pulls/pulls#merge-a-pull-request"}`)
	case r.Method == http.MethodPut && r.URL.Path == "/repos/acme/calc/pulls/7/merge":
		reply(http.StatusOK, `{"sha":"`+ghMerged+`","merged":true,"message":"Pull Request successfully merged"}`)
	case r.Method == http.MethodPost && r.URL.Path == "/graphql" && strings.Contains(req.Body["query"].(string), "markPullRequestReadyForReview"):
		vars, _ := req.Body["variables"].(map[string]any)
		if vars["id"] != ghNodeID {
			reply(http.StatusOK, `{"data":null,"errors":[{"type":"NOT_FOUND","message":"Could not resolve to a node with the global id of 'x'"}]}`)
			return
		}
		reply(http.StatusOK, `{"data":{"markPullRequestReadyForReview":{"pullRequest":{"isDraft":false}}}}`)
	default:
		reply(http.StatusNotFound, `{"message":"Not Found","documentation_url":"https://docs.github.com/rest"}`)
	}
}

// prEntry queues an entry for pull request 7 whose approval does action.
func prEntry(t *testing.T, queue, baseURL, action, method string) {
	writeEntry(t, queue, reviewID, nodes.ReviewEntry{Title: "fix: Add adds", Branch: "fix/add", Commit: ghHead, Status: nodes.StatusPending, Created: time.Now().UTC(),
		OnApprove:   &nodes.ApproveAction{GitHub: action, MergeMethod: method},
		PullRequest: &nodes.PullRequest{Repo: "acme/calc", Number: 7, NodeID: ghNodeID, BaseURL: baseURL, TokenEnv: "SANDGATE_TEST_GH_TOKEN"}})
}

// TestReviewApproveGitHub: approving does what on_approve says to pull
// request 7, and the double saw exactly that request, with the token.
func TestReviewApproveGitHub(t *testing.T) {
	t.Setenv("SANDGATE_TEST_GH_TOKEN", "gh-secret")
	for _, tc := range []struct {
		action, method, wantMethod, wantPath, wantLanded string
		wantBody                                         map[string]any
	}{
		{"approve", "", "POST", "/repos/acme/calc/pulls/7/reviews", "", map[string]any{"event": "APPROVE", "commit_id": ghHead}},
		{"merge", "squash", "PUT", "/repos/acme/calc/pulls/7/merge", ghMerged, map[string]any{"merge_method": "squash", "sha": ghHead}},
		{"merge", "rebase", "PUT", "/repos/acme/calc/pulls/7/merge", ghMerged, map[string]any{"merge_method": "rebase", "sha": ghHead}},
		{"ready", "", "POST", "/graphql", "", map[string]any{"variables": map[string]any{"id": ghNodeID}}},
	} {
		t.Run(tc.action+tc.method, func(t *testing.T) {
			api := newGitHubDouble(t)
			q := &nodes.ReviewQueue{Dir: t.TempDir(), AllowEndpoints: []string{api.URL}}
			prEntry(t, q.Dir, api.URL, tc.action, tc.method)
			e, err := q.Approve(context.Background(), reviewID, "lgtm", "alice")
			if err != nil {
				t.Fatal(err)
			}
			got := api.seen()
			if len(got) != 1 || got[0].Method != tc.wantMethod || got[0].Path != tc.wantPath || got[0].Auth != "Bearer gh-secret" {
				t.Fatalf("the double saw %+v, want one %s %s with the token", got, tc.wantMethod, tc.wantPath)
			}
			for k, v := range tc.wantBody {
				if b, _ := json.Marshal(got[0].Body[k]); string(b) != string(must(json.Marshal(v))) {
					t.Errorf("%s = %s, want %v", k, b, v)
				}
			}
			if e.Status != nodes.StatusApproved || e.Landed != tc.wantLanded {
				t.Fatalf("entry %+v", e)
			}
		})
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// TestReviewApproveGitHubRefused: GitHub refusing the merge (not
// mergeable, or the head moved past the reviewed commit) leaves the entry
// pending with GitHub's reason.
func TestReviewApproveGitHubRefused(t *testing.T) {
	t.Setenv("SANDGATE_TEST_GH_TOKEN", "gh-secret")
	for _, tc := range []struct {
		status int
		commit string
		want   string
	}{
		{http.StatusMethodNotAllowed, ghHead, "405 Method Not Allowed: Pull Request is not mergeable"},
		{0, strings.Repeat("1", 40), "409 Conflict: Head branch was modified"},
	} {
		api := newGitHubDouble(t)
		api.mergeStatus = tc.status
		q := &nodes.ReviewQueue{Dir: t.TempDir(), AllowEndpoints: []string{api.URL}}
		prEntry(t, q.Dir, api.URL, "merge", "merge")
		d, _ := q.Get(reviewID)
		d.Entry.Commit = tc.commit
		writeEntry(t, q.Dir, reviewID, d.Entry)
		_, err := q.Approve(context.Background(), reviewID, "", "alice")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Fatalf("approve: %v, want %q", err, tc.want)
		}
		if d, _ := q.Get(reviewID); d.Entry.Status != nodes.StatusPending {
			t.Fatalf("a refused merge recorded %s", d.Entry.Status)
		}
	}
}

// TestReviewApproveTokenStaysHome: the token goes only to GitHub or an
// allowed prefix. An allowed API that redirects to another port of the same
// host (where Go's client keeps the Authorization header), and an entry
// whose base_url someone edited to another server, get the approval
// refused before the token leaves.
func TestReviewApproveTokenStaysHome(t *testing.T) {
	t.Setenv("SANDGATE_TEST_GH_TOKEN", "gh-secret")
	evil := newGitHubDouble(t)
	hop := newGitHubDouble(t)
	hop.redirect = evil.URL
	for _, tc := range []struct{ name, base, want string }{
		{"redirect", hop.URL, "redirect: the blueprint would send a credential to " + evil.URL},
		{"edited entry", evil.URL, "review base_url: the blueprint would send a credential to " + evil.URL},
	} {
		q := &nodes.ReviewQueue{Dir: t.TempDir(), AllowEndpoints: []string{hop.URL}}
		prEntry(t, q.Dir, tc.base, "approve", "")
		_, err := q.Approve(context.Background(), reviewID, "", "alice")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: approve: %v, want %q", tc.name, err, tc.want)
		}
		if got := evil.seen(); len(got) != 0 {
			t.Fatalf("BREACH: %s: the token went to a server the operator did not allow: %+v", tc.name, got)
		}
		if d, _ := q.Get(reviewID); d.Entry.Status != nodes.StatusPending {
			t.Errorf("%s: refused approval recorded %s", tc.name, d.Entry.Status)
		}
	}
}

const draftFlow = `version: 1
name: draft
start: fix
nodes:
  fix: {type: shell, run: "sed -i 's/a - b/a + b/' calc.go", next: test}
  test: {type: test, run: go test -json ./..., on_pass: commit, on_fail: stuck}
  commit: {type: git_commit, branch: fix/add, message: "fix: Add adds", next: review}
  review: {type: review, queue: github, repo: acme/calc, base_url: API, token_env: SANDGATE_TEST_GH_TOKEN, dir: REVIEWS, on_approve: {github: ready}, next: done}
  done: {type: succeed}
  stuck: {type: handoff}
`

// TestReviewNodeRecordsPullRequest: with on_approve ready, the review node
// opens a draft and queues an entry holding the pull request's number and
// node id, and approving the entry marks that pull request ready.
func TestReviewNodeRecordsPullRequest(t *testing.T) {
	repo := seedRepo(t)
	t.Setenv("SANDGATE_TEST_GH_TOKEN", "gh-secret")
	api := newGitHubDouble(t)
	reviews := t.TempDir()
	h := newHarnessWith(t, repo, nodes.Options{AllowEndpoints: []string{api.URL}})
	sum := h.run(t, strings.NewReplacer("API", api.URL, "REVIEWS", reviews).Replace(draftFlow), nil)
	if sum.Status != runtime.StatusSucceeded {
		t.Fatalf("run %s: %s", sum.Status, sum.Reason)
	}
	if got := api.seen(); len(got) != 1 || got[0].Body["draft"] != true {
		t.Fatalf("want one pull request opened as a draft, the double saw %+v", got)
	}
	q := &nodes.ReviewQueue{Dir: reviews, AllowEndpoints: []string{api.URL}}
	d, err := q.Get(filepath.Base(sum.Dir))
	if err != nil {
		t.Fatal(err)
	}
	if pr := d.Entry.PullRequest; pr == nil || pr.Number != 7 || pr.NodeID != ghNodeID || !pr.Draft || d.Entry.OnApprove.GitHub != "ready" {
		t.Fatalf("entry %+v, pull request %+v", d.Entry, d.Entry.PullRequest)
	}
	if b, _ := os.ReadFile(filepath.Join(reviews, d.Entry.ID, "entry.json")); strings.Contains(string(b), "gh-secret") {
		t.Fatal("BREACH: the token was written into the entry")
	}
	if _, err := q.Approve(context.Background(), d.Entry.ID, "", "alice"); err != nil {
		t.Fatal(err)
	}
	if got := api.seen(); len(got) != 2 || got[1].Path != "/graphql" {
		t.Fatalf("approve: the double saw %+v", got)
	}
}
