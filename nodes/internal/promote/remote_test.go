package promote_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/sandgate/sandgate/nodes"
	"github.com/sandgate/sandgate/nodes/internal/nodetest"
	"github.com/sandgate/sandgate/runtime"
)

const promote = `version: 1
name: promote
start: fix
nodes:
  fix: {type: shell, run: "sed -i 's/a - b/a + b/' calc.go", next: test}
  test: {type: test, run: go test -json ./..., on_pass: commit, on_fail: stuck}
  commit: {type: git_commit, branch: fix/add, message: "fix: Add adds", next: push}
  push: {type: git_push, remote: REMOTE, token_env: SANDGATE_TEST_PUSH_TOKEN, next: again}
  again: {type: git_push, remote: REMOTE, token_env: SANDGATE_TEST_PUSH_TOKEN, next: review}
  review: {type: review, queue: github, repo: acme/calc, base_url: API, token_env: SANDGATE_TEST_GH_TOKEN, next: done}
  done: {type: succeed}
  stuck: {type: handoff}
`

// TestPushOverSmartHTTPAndOpenPR pushes through git http-backend behind
// Go's CGI handler (checking the token) and opens a pull request against a
// loopback server that checks every request like the GitHub API.
func TestPushOverSmartHTTPAndOpenPR(t *testing.T) {
	repo := nodetest.SeedRepo(t)
	gitSrv, root := nodetest.SmartHTTP(t, repo, "push-secret")
	var mu sync.Mutex
	var prs []map[string]any
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.Header.Get("Authorization") != "Bearer gh-secret":
			w.WriteHeader(http.StatusUnauthorized)
			io.WriteString(w, `{"message":"Bad credentials"}`)
		case r.Method != http.MethodPost || r.URL.Path != "/repos/acme/calc/pulls" || r.Header.Get("X-GitHub-Api-Version") == "":
			w.WriteHeader(http.StatusNotFound)
			io.WriteString(w, `{"message":"Not Found"}`)
		default:
			var body map[string]any
			if json.NewDecoder(r.Body).Decode(&body) != nil || body["head"] != "fix/add" || body["base"] != "main" || body["title"] == "" {
				w.WriteHeader(http.StatusUnprocessableEntity)
				io.WriteString(w, `{"message":"Validation Failed","errors":[{"message":"bad pull request"}]}`)
				return
			}
			mu.Lock()
			prs = append(prs, body)
			mu.Unlock()
			w.WriteHeader(http.StatusCreated)
			io.WriteString(w, `{"number":7,"html_url":"https://github.example/acme/calc/pull/7"}`)
		}
	}))
	defer api.Close()
	allow := nodes.Options{AllowEndpoints: []string{gitSrv.URL, api.URL}}
	t.Setenv("SANDGATE_TEST_PUSH_TOKEN", "push-secret")
	t.Setenv("SANDGATE_TEST_GH_TOKEN", "gh-secret")
	src := strings.NewReplacer("REMOTE", gitSrv.URL+"/calc.git", "API", api.URL).Replace(promote)
	sum := nodetest.NewHarnessWith(t, repo, allow).Run(t, src, nil)
	if sum.Status != runtime.StatusSucceeded {
		t.Fatalf("run %s: %s", sum.Status, sum.Reason)
	}
	if log := nodetest.Run(t, filepath.Join(root, "calc.git"), "git", "log", "--format=%s", "fix/add"); log != "fix: Add adds\ncalc with a bug" {
		t.Fatalf("pushed branch: %q", log)
	}
	var pushed []any
	for _, ev := range nodetest.ReadEvents(t, sum.Dir) {
		if ev.Type == runtime.EvNodeFinished && (ev.Node == "push" || ev.Node == "again") {
			pushed = append(pushed, ev.Outputs["pushed"])
		}
	}
	if len(pushed) != 2 || pushed[0] != true || pushed[1] != false {
		t.Fatalf("second push of the same commit must be a no-op: %v", pushed)
	}
	mu.Lock()
	if len(prs) != 1 || !strings.Contains(prs[0]["body"].(string), `"tests"`) {
		t.Fatalf("pull request: %v", prs)
	}
	mu.Unlock()

	// A rejected token is a clear failure, not a silent success.
	t.Setenv("SANDGATE_TEST_GH_TOKEN", "wrong")
	src = strings.Replace(src, "branch: fix/add", "branch: fix/add-2", 1)
	sum = nodetest.NewHarnessWith(t, repo, allow).Run(t, src, nil)
	if sum.Status != runtime.StatusFailed || !strings.Contains(sum.Reason, "401") || !strings.Contains(sum.Reason, "Bad credentials") {
		t.Fatalf("wrong GitHub token: %s (%s)", sum.Status, sum.Reason)
	}
}
