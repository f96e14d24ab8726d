package reviewqueue_test

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sandgate/sandgate/nodes"
	"github.com/sandgate/sandgate/nodes/internal/credential"
	"github.com/sandgate/sandgate/nodes/internal/nodetest"
)

// TestReviewApproveGitHubApp: a pull request a review opened with a
// minted token is approved (or merged) with a token minted for that one
// repository and the action's permission alone, not the operator's
// token_env (set here, and never sent), and revoked once done: GitHub
// answers 401 for it afterwards.
func TestReviewApproveGitHubApp(t *testing.T) {
	t.Setenv("GITHUB_TOKEN", "ghp_operators_wide_token_never_sent_0000")
	for _, c := range []struct {
		action, path string
		perms        map[string]string
	}{
		{"approve", "/pulls/7/reviews", map[string]string{"pull_requests": "write"}},
		{"merge", "/pulls/7/merge", map[string]string{"contents": "write"}},
	} {
		t.Run(c.action, func(t *testing.T) {
			gh, cfg, _ := nodetest.NewGitHubApp(t)
			q := &nodes.ReviewQueue{Dir: t.TempDir(), AllowEndpoints: []string{gh.API.URL}}
			nodetest.WriteEntry(t, q.Dir, nodetest.ReviewID, nodes.ReviewEntry{Title: "fix: Add adds", Branch: "fix/add", Commit: nodetest.GHHead, Status: nodes.StatusPending,
				OnApprove:   &nodes.ApproveAction{GitHub: c.action, MergeMethod: "squash"},
				PullRequest: &nodes.PullRequest{Repo: "acme/calc", Number: 7, BaseURL: gh.API.URL, Credentials: &credential.AppConfig{AppIDEnv: cfg.AppIDEnv, KeyFile: cfg.KeyFile, InstallationID: cfg.InstallationID}}})
			e, err := q.Approve(context.Background(), nodetest.ReviewID, "lgtm", "alice")
			if err != nil {
				t.Fatal(err)
			}
			acts, minted := gh.Acts(), gh.Minted()
			if e.Status != nodes.StatusApproved || len(acts) != 1 || acts[0].Repo != "acme/calc" || acts[0].Path != c.path {
				t.Fatalf("entry %s, acts %+v", e.Status, acts)
			}
			if len(minted) != 1 || strings.Join(minted[0].Repos, ",") != "acme/calc" || len(minted[0].Permissions) != len(c.perms) {
				t.Fatalf("minted %+v", minted)
			}
			for k, v := range c.perms {
				if minted[0].Permissions[k] != v {
					t.Fatalf("minted %+v, want %v", minted[0].Permissions, c.perms)
				}
			}
			if got := gh.TokenStatus(minted[0].Token, "", "", ""); got != http.StatusUnauthorized {
				t.Fatalf("after approving the token answers %d, want 401", got)
			}
			ledger, _ := os.ReadFile(filepath.Join(q.Dir, nodetest.ReviewID, credential.LedgerFile))
			if !strings.Contains(string(ledger), `"event":"revoked"`) || strings.Contains(string(ledger), minted[0].Token) {
				t.Fatalf("ledger:\n%s", ledger)
			}
		})
	}
}

// TestAttackReviewPruneForgetsNoToken: an approval's process dies
// holding a minted token (its lease never closed). Pruning the decided
// entry without the allowance to reach the API keeps the entry and says
// why; with it, the token is revoked (401) and then the entry goes.
func TestAttackReviewPruneForgetsNoToken(t *testing.T) {
	gh, cfg, _ := nodetest.NewGitHubApp(t)
	q := &nodes.ReviewQueue{Dir: t.TempDir()}
	nodetest.WriteEntry(t, q.Dir, nodetest.ReviewID, nodes.ReviewEntry{Title: "x", Status: nodes.StatusApproved})
	dir := filepath.Join(q.Dir, nodetest.ReviewID)
	lease, err := credential.Borrow(context.Background(), cfg, []string{gh.API.URL}, credential.Review, "acme/calc", dir, "approve", nil)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := lease.Token()
	if err != nil {
		t.Fatal(err)
	}
	// The process dies here.
	if err := q.Remove(nodetest.ReviewID); err == nil || !strings.Contains(err.Error(), "kept: its minted tokens are not all revoked") {
		t.Fatalf("remove without the allowance: %v", err)
	}
	if _, err := os.Stat(dir); err != nil {
		t.Fatal("the entry and its ledger went with a live token")
	}
	q.AllowEndpoints = []string{gh.API.URL}
	if err := q.Remove(nodetest.ReviewID); err != nil {
		t.Fatal(err)
	}
	if got := gh.TokenStatus(tok, "", "", ""); got != http.StatusUnauthorized {
		t.Fatalf("after the prune the token answers %d, want 401", got)
	}
}
