package inbox_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/sandgate/sandgate/inbox"
)

// TestHooksOnlyExactPaths: a hook (inbox/trigger's endpoints) is reached
// without the inbox's token only by POST to exactly its path; every other
// spelling, method or path — cleaned, doubled, escaped, traversing — is
// the signed-in inbox's, which refuses it.
func TestHooksOnlyExactPaths(t *testing.T) {
	hook := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "hook "+r.URL.Path) })
	srv, err := inbox.New(inbox.Options{RunsDirs: []string{t.TempDir()}, Token: "secret-token-0123456789",
		Hooks: map[string]http.Handler{"/hooks/github": hook}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Index().Close)
	ts := httptest.NewServer(srv)
	defer ts.Close()
	send := func(method, path string) (int, string) {
		req, _ := http.NewRequest(method, ts.URL+path, strings.NewReader("{}"))
		req.URL.Opaque = path // sent as written, not cleaned by the client
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := send("POST", "/hooks/github"); code != 200 || body != "hook /hooks/github" {
		t.Fatalf("the hook: %d %q", code, body)
	}
	for _, c := range []struct{ method, path string }{
		{"GET", "/hooks/github"},
		{"PUT", "/hooks/github"},
		{"POST", "/hooks/github/"},
		{"POST", "/hooks//github"},
		{"POST", "/hooks/github/../start/fix-ci"},
		{"POST", "/hooks/github/%2e%2e/start/fix-ci"},
		{"POST", "/hooks/%67ithub"},
		{"POST", "/Hooks/github"},
		{"POST", "/hooks/github?x=/start/fix-ci"},
		{"POST", "/hooks/slack"},
		{"POST", "/start/fix-ci"},
		{"GET", "/"},
	} {
		code, body := send(c.method, c.path)
		if strings.HasPrefix(body, "hook") && c.path != "/hooks/github?x=/start/fix-ci" {
			t.Errorf("BREACH: %s %s reached the hook without a token: %q", c.method, c.path, body)
		}
		if strings.Contains(c.path, "?") {
			// The query is not the path: this is the hook itself.
			if body != "hook /hooks/github" {
				t.Errorf("%s %s: %d %q", c.method, c.path, code, body)
			}
			continue
		}
		if code != http.StatusUnauthorized {
			t.Errorf("%s %s: %d %q, want the inbox's 401", c.method, c.path, code, body)
		}
	}
}
