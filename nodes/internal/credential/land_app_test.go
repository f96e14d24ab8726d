package credential_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sandgate/sandgate/nodes"
	"github.com/sandgate/sandgate/nodes/internal/credential"
	"github.com/sandgate/sandgate/nodes/internal/nodetest"
	"github.com/sandgate/sandgate/runtime"
)

// localFlow pushes with a minted token (deleting the branch when the
// change is rejected) and queues the change locally, to land on main of
// the remote it pushed to when approved.
const localFlow = `version: 1
name: app-token-local
start: fix
nodes:
  fix: {type: shell, run: "sed -i 's/a - b/a + b/' calc.go", next: test}
  test: {type: test, run: go test -json ./..., on_pass: commit, on_fail: stuck}
  commit: {type: git_commit, branch: fix/add, message: "fix: Add adds", next: push}
  push:
    type: git_push
    remote: GIT/acme/calc.git
    delete_on_reject: true
    credentials: {github_app: {app_id_env: SANDGATE_TEST_APP_ID, key_file: KEY, installation_id: 77, base_url: API}}
    next: review
  review: {type: review, queue: local, dir: QDIR, on_approve: {merge_into: main}, next: done}
  done: {type: succeed}
  stuck: {type: handoff}
`

// TestAppTokenLandAndReject: a change pushed with a minted token is
// landed (approve) or its branch deleted (reject) from the local review
// queue with a token minted for that action alone (acme/calc, contents:
// write), not with no token at all, and revoked after: every token the
// double minted answers 401, and the entry's ledger holds none of them.
func TestAppTokenLandAndReject(t *testing.T) {
	for _, decision := range []string{"approve", "reject"} {
		t.Run(decision, func(t *testing.T) {
			a := newAppRun(t, nil)
			qdir := t.TempDir()
			src := strings.NewReplacer("GIT", a.git.URL, "API", a.gh.API.URL, "KEY", a.key, "QDIR", qdir).Replace(localFlow)
			sum := a.h.Run(t, src, nil)
			if sum.Status != runtime.StatusSucceeded {
				t.Fatalf("run %s: %s", sum.Status, sum.Reason)
			}
			q := &nodes.ReviewQueue{Dir: qdir, AllowEndpoints: []string{a.git.URL, a.gh.API.URL}}
			entries, err := q.List()
			if err != nil || len(entries) != 1 {
				t.Fatalf("queue: %d entries, %v", len(entries), err)
			}
			e := entries[0]
			pushes := len(a.gh.Minted())
			if decision == "approve" {
				_, err = q.Approve(context.Background(), e.ID, "lgtm", "alice")
			} else {
				_, err = q.Reject(context.Background(), e.ID, "no", "alice")
			}
			if err != nil {
				t.Fatal(err)
			}
			bare := filepath.Join(a.root, "acme", "calc.git")
			if decision == "approve" {
				if tip := nodetest.Run(t, bare, "git", "rev-parse", "main"); tip != e.Commit {
					t.Fatalf("main is at %s, want the reviewed %s", tip, e.Commit)
				}
			} else if out, err := exec.Command("git", "-C", bare, "rev-parse", "--verify", "-q", "refs/heads/fix/add").Output(); err == nil {
				t.Fatalf("fix/add is still on the remote at %s", out)
			}
			minted := a.gh.Minted()
			if len(minted) != pushes+1 {
				t.Fatalf("minted %d tokens for the %s, want 1", len(minted)-pushes, decision)
			}
			if m := minted[len(minted)-1]; strings.Join(m.Repos, ",") != "acme/calc" || len(m.Permissions) != 1 || m.Permissions["contents"] != "write" {
				t.Fatalf("the %s's token: %+v", decision, m)
			}
			toks := a.mustBeDead(t)
			ledger, _ := os.ReadFile(filepath.Join(qdir, e.ID, credential.LedgerFile))
			if strings.Count(string(ledger), `"event":"revoked"`) != 1 {
				t.Fatalf("entry's ledger:\n%s", ledger)
			}
			mustNotHold(t, qdir, toks)
		})
	}
}
