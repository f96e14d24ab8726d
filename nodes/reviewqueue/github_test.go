package reviewqueue_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/sandgate/sandgate/nodes"
	"github.com/sandgate/sandgate/nodes/internal/nodetest"
)

// TestReviewApproveGitHub: approving does what on_approve says to pull
// request 7, and the double saw exactly that request, with the token.
func TestReviewApproveGitHub(t *testing.T) {
	t.Setenv("SANDGATE_TEST_GH_TOKEN", "gh-secret")
	for _, tc := range []struct {
		action, method, wantMethod, wantPath, wantLanded string
		wantBody                                         map[string]any
	}{
		{"approve", "", "POST", "/repos/acme/calc/pulls/7/reviews", "", map[string]any{"event": "APPROVE", "commit_id": nodetest.GHHead}},
		{"merge", "squash", "PUT", "/repos/acme/calc/pulls/7/merge", nodetest.GHMerged, map[string]any{"merge_method": "squash", "sha": nodetest.GHHead}},
		{"merge", "rebase", "PUT", "/repos/acme/calc/pulls/7/merge", nodetest.GHMerged, map[string]any{"merge_method": "rebase", "sha": nodetest.GHHead}},
		{"ready", "", "POST", "/graphql", "", map[string]any{"variables": map[string]any{"id": nodetest.GHNodeID}}},
	} {
		t.Run(tc.action+tc.method, func(t *testing.T) {
			api := nodetest.NewGitHubDouble(t)
			q := &nodes.ReviewQueue{Dir: t.TempDir(), AllowEndpoints: []string{api.URL}}
			nodetest.PREntry(t, q.Dir, api.URL, tc.action, tc.method)
			e, err := q.Approve(context.Background(), nodetest.ReviewID, "lgtm", "alice")
			if err != nil {
				t.Fatal(err)
			}
			got := api.Seen()
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
		{http.StatusMethodNotAllowed, nodetest.GHHead, "405 Method Not Allowed: Pull Request is not mergeable"},
		{0, strings.Repeat("1", 40), "409 Conflict: Head branch was modified"},
	} {
		api := nodetest.NewGitHubDouble(t)
		api.MergeStatus = tc.status
		q := &nodes.ReviewQueue{Dir: t.TempDir(), AllowEndpoints: []string{api.URL}}
		nodetest.PREntry(t, q.Dir, api.URL, "merge", "merge")
		d, _ := q.Get(nodetest.ReviewID)
		d.Entry.Commit = tc.commit
		nodetest.WriteEntry(t, q.Dir, nodetest.ReviewID, d.Entry)
		_, err := q.Approve(context.Background(), nodetest.ReviewID, "", "alice")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Fatalf("approve: %v, want %q", err, tc.want)
		}
		if d, _ := q.Get(nodetest.ReviewID); d.Entry.Status != nodes.StatusPending {
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
	evil := nodetest.NewGitHubDouble(t)
	hop := nodetest.NewGitHubDouble(t)
	hop.Redirect = evil.URL
	for _, tc := range []struct{ name, base, want string }{
		{"redirect", hop.URL, "redirect: the blueprint would send a credential to " + evil.URL},
		{"edited entry", evil.URL, "review base_url: the blueprint would send a credential to " + evil.URL},
	} {
		q := &nodes.ReviewQueue{Dir: t.TempDir(), AllowEndpoints: []string{hop.URL}}
		nodetest.PREntry(t, q.Dir, tc.base, "approve", "")
		_, err := q.Approve(context.Background(), nodetest.ReviewID, "", "alice")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: approve: %v, want %q", tc.name, err, tc.want)
		}
		if got := evil.Seen(); len(got) != 0 {
			t.Fatalf("BREACH: %s: the token went to a server the operator did not allow: %+v", tc.name, got)
		}
		if d, _ := q.Get(nodetest.ReviewID); d.Entry.Status != nodes.StatusPending {
			t.Errorf("%s: refused approval recorded %s", tc.name, d.Entry.Status)
		}
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
