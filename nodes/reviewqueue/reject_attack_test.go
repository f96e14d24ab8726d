package reviewqueue_test

import (
	"context"
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sandgate/sandgate/nodes"
	"github.com/sandgate/sandgate/nodes/internal/nodetest"
)

// tokenCatcher is a git remote over HTTP that asks every request for a
// password and keeps the ones it is given.
type tokenCatcher struct {
	*httptest.Server
	mu        sync.Mutex
	requests  int
	passwords []string
}

func newTokenCatcher(t *testing.T) *tokenCatcher {
	c := &tokenCatcher{}
	c.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.mu.Lock()
		c.requests++
		if auth, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Basic "); ok {
			b, _ := base64.StdEncoding.DecodeString(auth)
			_, pass, _ := strings.Cut(string(b), ":")
			c.passwords = append(c.passwords, pass)
		}
		c.mu.Unlock()
		w.Header().Set("WWW-Authenticate", `Basic realm="git"`)
		http.Error(w, "who are you", http.StatusUnauthorized)
	}))
	t.Cleanup(c.Close)
	return c
}

// reset forgets what the catcher has seen, for the next caller.
func (c *tokenCatcher) reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.requests, c.passwords = 0, nil
}

func (c *tokenCatcher) seen() (int, []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.requests, append([]string(nil), c.passwords...)
}

// TestRejectDeleteSendsTokenOnlyWhereAllowed: an entry's delete_on_reject
// branch names its remote and the variable holding the push token
// (token_env), and the entry is a file anyone with the queue directory
// can edit. The attack: point the remote at a server of one's own, which
// asks for a password. Rejecting must not contact it unless the operator
// allowed it (--allow-endpoint), as landing and every GitHub call check;
// the allowed case shows the server would have caught the token.
func TestRejectDeleteSendsTokenOnlyWhereAllowed(t *testing.T) {
	const secret = "push-secret-5e1f"
	t.Setenv("SANDGATE_TEST_PUSH_TOKEN", secret)
	for _, tc := range []struct {
		name    string
		allowed func(catcher string) []string
		sent    bool
	}{
		{"nothing allowed", func(string) []string { return nil }, false},
		{"another endpoint allowed", func(string) []string { return []string{"https://git.example.com/"} }, false},
		{"the remote allowed", func(c string) []string { return []string{c + "/"} }, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			catcher := newTokenCatcher(t)
			q := &nodes.ReviewQueue{Dir: t.TempDir(), AllowEndpoints: tc.allowed(catcher.URL)}
			t.Run("library's DeleteBranch", func(t *testing.T) {
				err := nodes.DeleteBranch(context.Background(), nodes.PushedBranch{Remote: catcher.URL + "/acme/calc.git",
					Ref: "refs/heads/fix/add", Commit: nodetest.GHHead, TokenEnv: "SANDGATE_TEST_PUSH_TOKEN"}, q.AllowEndpoints)
				checkTokenCatcher(t, catcher, tc.sent, err, secret)
			})
			catcher.reset()
			nodetest.WriteEntry(t, q.Dir, nodetest.ReviewID, nodes.ReviewEntry{Title: "fix: Add adds", Branch: "fix/add",
				Commit: nodetest.GHHead, Status: nodes.StatusPending, Created: time.Now().UTC(),
				DeleteOnReject: []nodes.PushedBranch{{Remote: catcher.URL + "/acme/calc.git", Ref: "refs/heads/fix/add",
					Commit: nodetest.GHHead, TokenEnv: "SANDGATE_TEST_PUSH_TOKEN"}}})
			e, err := q.Reject(context.Background(), nodetest.ReviewID, "no", "alice")
			if e == nil || e.Status != nodes.StatusRejected {
				t.Fatalf("the entry was not rejected: %v, %v", e, err)
			}
			checkTokenCatcher(t, catcher, tc.sent, err, secret)
		})
	}
}

// checkTokenCatcher fails t when the catcher got the token it should not
// have (or, allowed, did not get it: then it would miss the attack), or
// when the deletion's error is silent or shows the token.
func checkTokenCatcher(t *testing.T, catcher *tokenCatcher, sent bool, err error, secret string) {
	t.Helper()
	if err == nil {
		t.Error("the branch could not be deleted and nothing says so")
	}
	requests, passwords := catcher.seen()
	gotToken := strings.Contains(strings.Join(passwords, " "), secret)
	switch {
	case sent && !gotToken:
		t.Fatalf("allowed, the remote got %d requests and passwords %q, not the token: the catcher would miss the attack (%v)", requests, passwords, err)
	case !sent && gotToken:
		t.Fatal("the push token went to a remote the operator never allowed")
	case !sent && requests != 0:
		t.Errorf("a remote the operator never allowed was contacted %d times", requests)
	}
	if err != nil && strings.Contains(err.Error(), secret) {
		t.Errorf("the error shows the token: %v", err)
	}
}
