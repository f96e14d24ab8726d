package review_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sandgate/sandgate/nodes"
	"github.com/sandgate/sandgate/nodes/internal/nodetest"
	"github.com/sandgate/sandgate/runtime"
)

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
	repo := nodetest.SeedRepo(t)
	t.Setenv("SANDGATE_TEST_GH_TOKEN", "gh-secret")
	api := nodetest.NewGitHubDouble(t)
	reviews := t.TempDir()
	h := nodetest.NewHarnessWith(t, repo, nodes.Options{AllowEndpoints: []string{api.URL}})
	sum := h.Run(t, strings.NewReplacer("API", api.URL, "REVIEWS", reviews).Replace(draftFlow), nil)
	if sum.Status != runtime.StatusSucceeded {
		t.Fatalf("run %s: %s", sum.Status, sum.Reason)
	}
	if got := api.Seen(); len(got) != 1 || got[0].Body["draft"] != true {
		t.Fatalf("want one pull request opened as a draft, the double saw %+v", got)
	}
	q := &nodes.ReviewQueue{Dir: reviews, AllowEndpoints: []string{api.URL}}
	d, err := q.Get(filepath.Base(sum.Dir))
	if err != nil {
		t.Fatal(err)
	}
	if pr := d.Entry.PullRequest; pr == nil || pr.Number != 7 || pr.NodeID != nodetest.GHNodeID || !pr.Draft || d.Entry.OnApprove.GitHub != "ready" {
		t.Fatalf("entry %+v, pull request %+v", d.Entry, d.Entry.PullRequest)
	}
	if b, _ := os.ReadFile(filepath.Join(reviews, d.Entry.ID, "entry.json")); strings.Contains(string(b), "gh-secret") {
		t.Fatal("BREACH: the token was written into the entry")
	}
	if _, err := q.Approve(context.Background(), d.Entry.ID, "", "alice"); err != nil {
		t.Fatal(err)
	}
	if got := api.Seen(); len(got) != 2 || got[1].Path != "/graphql" {
		t.Fatalf("approve: the double saw %+v", got)
	}
}
