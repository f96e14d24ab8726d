package nodes_test

import (
	"context"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/sandgate/sandgate/blueprint"
	"github.com/sandgate/sandgate/nodes"
	"github.com/sandgate/sandgate/nodes/internal/nodetest"
	"github.com/sandgate/sandgate/runtime"
)

// tokenFlow fixes the bug, commits, and hands the commit to NODE (a
// git_push or a review that sends a token); the input exists for
// templated endpoints.
const tokenFlow = `version: 1
name: tokens
inputs:
  where: {required: false, default: "x"}
start: fix
nodes:
  fix: {type: shell, run: "sed -i 's/a - b/a + b/' calc.go", next: test}
  test: {type: test, run: go test -json ./..., on_pass: commit, on_fail: stuck}
  commit: {type: git_commit, branch: fix/add, message: "fix: Add adds", next: send}
  send: NODE
  done: {type: succeed}
  stuck: {type: handoff}
`

// laxTypes are the built-in types with field's Endpoint mark removed: a
// validator that skipped the loader's check, so the node's own check at
// run time is what stands between the blueprint and the token.
func laxTypes(typ, field string) blueprint.MapTypes {
	ts := nodes.Types()
	nt := ts[typ]
	nt.Fields = maps.Clone(nt.Fields)
	f := nt.Fields[field]
	f.Endpoint, f.Trusted = false, nil
	nt.Fields[field] = f
	ts[typ] = nt
	return ts
}

// loadError wants the loader to refuse src at field with its position.
func loadError(t *testing.T, h *nodetest.Harness, src, field, value, want string) {
	t.Helper()
	line := 1 + strings.Count(src[:strings.Index(src, value)], "\n")
	lineStart := strings.LastIndex(src[:strings.Index(src, value)], "\n") + 1
	pos := fmt.Sprintf("test.yaml:%d:%d: nodes.send.%s: ", line, strings.Index(src, value)-lineStart+1, field)
	_, err := h.RT.Registry.Parse("test.yaml", []byte(src))
	if err == nil || !strings.Contains(err.Error(), pos+want) {
		t.Fatalf("load: %v\nwant %q", err, pos+want)
	}
}

// runWith runs src with input where, validated by types, or loaded through
// the harness's registry (with its allowances) when types is nil.
func runWith(t *testing.T, h *nodetest.Harness, types blueprint.TypeSet, src, where string) *runtime.Summary {
	t.Helper()
	bp, err := h.RT.Registry.Parse("test.yaml", []byte(src))
	if types != nil {
		bp, err = blueprint.Parse("test.yaml", []byte(src), blueprint.WithTypes(types))
	}
	if err != nil {
		t.Fatalf("blueprint: %v", err)
	}
	sum, err := h.RT.Run(context.Background(), bp, runtime.RunOptions{Workspace: h.Repo, Inputs: map[string]any{"where": where}})
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	return sum
}

func mustRefuse(t *testing.T, sum *runtime.Summary, want string) {
	t.Helper()
	if sum.Status != runtime.StatusFailed || !strings.Contains(sum.Reason, want) {
		t.Fatalf("want the run refused with %q: %s (%s)", want, sum.Status, sum.Reason)
	}
}

// TestPushTokenOnlyToAllowedRemotes pushes with a token to a loopback
// smart-HTTP server the operator did not allow: literally (refused at load
// with the field's position, and by the node when the loader's check is
// skipped), through a template rendered at run time, and through a path
// that climbs out of the allowed prefix. The server must see no request at
// all. A local path with token_env is refused too. With the operator's
// allowance the same server gets the token and the branch, which proves it
// would have seen a leak.
func TestPushTokenOnlyToAllowedRemotes(t *testing.T) {
	repo := nodetest.SeedRepo(t)
	srv, root := nodetest.SmartHTTP(t, repo, "push-secret")
	t.Setenv("SANDGATE_TEST_PUSH_TOKEN", "push-secret")
	url := srv.URL + "/calc.git"
	node := func(remote string) string {
		return strings.Replace(tokenFlow, "NODE", "{type: git_push, remote: "+remote+", token_env: SANDGATE_TEST_PUSH_TOKEN, next: done}", 1)
	}
	templated := node(`"${{ inputs.where }}"`)
	h := nodetest.NewHarness(t, repo)
	refusal := "the blueprint would send a credential to " + url + "; credentials go only to https://github.com or to URL prefixes the operator allows (--allow-endpoint " + srv.URL + ")"

	loadError(t, h, node(url), "remote", url, refusal)
	climb := srv.URL + "/other/../calc.git"
	loadError(t, nodetest.NewHarnessWith(t, repo, nodes.Options{AllowEndpoints: []string{srv.URL + "/other"}}), node(climb), "remote", climb, "the blueprint would send a credential to "+climb)
	bare := filepath.Join(t.TempDir(), "local.git")
	nodetest.Run(t, "", "git", "init", "-q", "--bare", bare)
	loadError(t, h, node(bare), "remote", bare, bare+" is not an http(s) URL, and credentials are sent only over HTTP(S)")

	mustRefuse(t, runWith(t, h, laxTypes("git_push", "remote"), node(url), "x"), "remote (token_env SANDGATE_TEST_PUSH_TOKEN): "+refusal)
	mustRefuse(t, runWith(t, h, nil, templated, url), "remote (token_env SANDGATE_TEST_PUSH_TOKEN): "+refusal)
	mustRefuse(t, runWith(t, h, nil, templated, bare), bare+" is not an http(s) URL")
	if got := srv.Seen(); len(got) != 0 {
		t.Fatalf("the server saw %d requests before any allowance (passwords %q)", len(got), got)
	}
	if out, _ := exec.Command("git", "--git-dir="+bare, "for-each-ref").Output(); len(out) != 0 {
		t.Fatalf("pushed to the local path: %s", out)
	}

	allowed := nodetest.NewHarnessWith(t, repo, nodes.Options{AllowEndpoints: []string{srv.URL}})
	if sum := runWith(t, allowed, nil, templated, url); sum.Status != runtime.StatusSucceeded {
		t.Fatalf("allowed push: %s (%s)", sum.Status, sum.Reason)
	}
	if log := nodetest.Run(t, filepath.Join(root, "calc.git"), "git", "log", "--format=%s", "fix/add"); log != "fix: Add adds\ncalc with a bug" {
		t.Fatalf("pushed branch: %q", log)
	}
	if !strings.Contains(strings.Join(srv.Seen(), ","), "push-secret") {
		t.Fatalf("the allowed server never got the token: %q", srv.Seen())
	}
}

// apiDouble records every request's Authorization header and answers
// pull request creation like GitHub; with to set it redirects instead.
type apiDouble struct {
	*httptest.Server
	mu    sync.Mutex
	auths []string
}

func newAPIDouble(t *testing.T, to string) *apiDouble {
	a := &apiDouble{}
	a.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a.mu.Lock()
		a.auths = append(a.auths, r.Header.Get("Authorization"))
		a.mu.Unlock()
		if to != "" {
			http.Redirect(w, r, to+r.URL.Path, http.StatusTemporaryRedirect)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		io.WriteString(w, `{"number":7,"html_url":"https://github.example/acme/calc/pull/7"}`)
	}))
	t.Cleanup(a.Close)
	return a
}

func (a *apiDouble) Seen() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.auths...)
}

// TestReviewTokenOnlyToAllowedAPI opens a pull request against a loopback
// GitHub API double the operator did not allow: refused at load, and by
// the node when the loader's check is skipped. An allowed API that
// redirects to another port of the same host (where Go's client would keep
// the Authorization header) must not take the token there. With the
// allowance the double gets the token.
func TestReviewTokenOnlyToAllowedAPI(t *testing.T) {
	repo := nodetest.SeedRepo(t)
	t.Setenv("SANDGATE_TEST_GH_TOKEN", "gh-secret")
	api := newAPIDouble(t, "")
	evil := newAPIDouble(t, "")
	hop := newAPIDouble(t, evil.URL)
	node := func(base string) string {
		return strings.Replace(tokenFlow, "NODE", "{type: review, queue: github, repo: acme/calc, base_url: "+base+", token_env: SANDGATE_TEST_GH_TOKEN, next: done}", 1)
	}
	h := nodetest.NewHarness(t, repo)
	refusal := "the blueprint would send a credential to " + api.URL + "; credentials go only to https://api.github.com or to URL prefixes the operator allows (--allow-endpoint " + api.URL + ")"

	loadError(t, h, node(api.URL), "base_url", api.URL, refusal)
	mustRefuse(t, runWith(t, h, laxTypes("review", "base_url"), node(api.URL), "x"), "review base_url: "+refusal)
	if got := api.Seen(); len(got) != 0 {
		t.Fatalf("the API saw %d requests before any allowance (%q)", len(got), got)
	}

	viaHop := nodetest.NewHarnessWith(t, repo, nodes.Options{AllowEndpoints: []string{hop.URL}})
	mustRefuse(t, runWith(t, viaHop, nil, node(hop.URL), "x"), "redirect: the blueprint would send a credential to "+evil.URL)
	if got := evil.Seen(); len(got) != 0 {
		t.Fatalf("a redirect took the token to a host the operator did not allow: %q", got)
	}

	allowed := nodetest.NewHarnessWith(t, repo, nodes.Options{AllowEndpoints: []string{api.URL}})
	if sum := runWith(t, allowed, nil, node(api.URL), "x"); sum.Status != runtime.StatusSucceeded {
		t.Fatalf("allowed review: %s (%s)", sum.Status, sum.Reason)
	}
	if got := api.Seen(); len(got) != 1 || got[0] != "Bearer gh-secret" {
		t.Fatalf("the allowed API got %q", got)
	}
}
