package credential_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/sandgate/sandgate/internal/ghfake"
	"github.com/sandgate/sandgate/nodes/internal/credential"
	"github.com/sandgate/sandgate/secrets"
)

// front is a server in front of the double; edit changes the answer to a
// token request (nil: passed on as is), and fail, while set, answers every
// revocation 502 as an API that is down would.
type front struct {
	URL  string
	edit func(map[string]any)
	fail atomic.Bool
}

func newFront(t *testing.T, gh *ghfake.Server) *front {
	f := &front{}
	target, _ := url.Parse(gh.API.URL)
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.ModifyResponse = func(resp *http.Response) error {
		if f.edit == nil || !strings.HasSuffix(resp.Request.URL.Path, "/access_tokens") || resp.StatusCode != http.StatusCreated {
			return nil
		}
		var body map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&body)
		f.edit(body)
		b, _ := json.Marshal(body)
		resp.Body = io.NopCloser(bytes.NewReader(b))
		resp.ContentLength = int64(len(b))
		resp.Header.Set("Content-Length", strconv.Itoa(len(b)))
		return nil
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if f.fail.Load() && r.Method == http.MethodDelete {
			http.Error(w, "bad gateway", http.StatusBadGateway)
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	f.URL = srv.URL
	return f
}

// TestAttackMintForAnotherRepository: repository names a blueprint input
// or a remote URL could carry to make the harness ask for a token beyond
// the run's repository (dot segments, more segments, look-alike letters,
// control characters, another owner whose repository has the same name)
// get no token: refused before any request, or, when only GitHub's
// answer shows it, revoked at once.
func TestAttackMintForAnotherRepository(t *testing.T) {
	gh, cfg, _ := newApp(t)
	app, _ := credential.NewGitHubApp(cfg, []string{gh.API.URL})
	for _, repo := range []string{"acme/calc/../docs", "acme/../docs", "../docs", "acme/..", "acme/cаlc", "acme/calc\n", "acme/calc docs", "acme/", "/calc", "acme/calc/extra", "ac%2Fme/calc"} {
		if _, err := app.Mint(context.Background(), credential.Request{Purpose: credential.Push, Repo: repo}); err == nil || !strings.Contains(err.Error(), "want owner/name") {
			t.Errorf("%q: %v", repo, err)
		}
	}
	if n := len(gh.Requests()); n != 0 {
		t.Fatalf("%d requests reached GitHub for names that are none", n)
	}
	// The request names only the repository's name (GitHub's API takes
	// names within the installation's owner): a run whose repository is
	// evil/calc would get acme/calc's token unless the answer is checked.
	_, err := app.Mint(context.Background(), credential.Request{Purpose: credential.Push, Repo: "evil/calc"})
	if err == nil || !strings.Contains(err.Error(), `refused: GitHub granted repositories ["acme/calc"], not evil/calc alone`) {
		t.Fatalf("another owner: %v", err)
	}
	mustAllBeDead(t, gh)
}

// TestAttackMintWiderThanAsked: an API that grants more than it was
// asked (another repository, the whole installation, a permission the
// purpose does not need, write where read was asked) gets its token
// revoked at once, and the node no token.
func TestAttackMintWiderThanAsked(t *testing.T) {
	gh, cfg, _ := newApp(t)
	f := newFront(t, gh)
	cfg.BaseURL = f.URL
	app, _ := credential.NewGitHubApp(cfg, []string{f.URL})
	for _, c := range []struct {
		name    string
		purpose credential.Purpose
		edit    func(map[string]any)
		want    string
	}{
		{"two repositories", credential.Push, func(b map[string]any) {
			b["repositories"] = append(b["repositories"].([]any), map[string]any{"full_name": "acme/docs"})
		}, `repositories ["acme/calc" "acme/docs"]`},
		{"no list", credential.Push, func(b map[string]any) { delete(b, "repositories") }, "repositories [], not acme/calc alone"},
		{"administration", credential.Push, func(b map[string]any) {
			b["permissions"].(map[string]any)["administration"] = "write"
		}, "administration: write beyond contents: write"},
		{"write for read", credential.CI, func(b map[string]any) {
			b["permissions"].(map[string]any)["checks"] = "write"
		}, "checks: write beyond checks: read"},
	} {
		f.edit = c.edit
		_, err := app.Mint(context.Background(), credential.Request{Purpose: c.purpose, Repo: "acme/calc"})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v", c.name, err)
		}
	}
	if len(gh.Minted()) != 4 {
		t.Fatalf("minted %d", len(gh.Minted()))
	}
	mustAllBeDead(t, gh)
}

// mustAllBeDead wants every token the double minted refused.
func mustAllBeDead(t *testing.T, gh *ghfake.Server) {
	t.Helper()
	for _, m := range gh.Minted() {
		if got := gh.TokenStatus(m.Token, "", "", ""); got != http.StatusUnauthorized {
			t.Errorf("a token for %v answers %d, want 401", m.Repos, got)
		}
	}
}

// TestAttackMintRedirectedElsewhere: a hostile GitHub Enterprise base_url
// answers the token request (and a revocation) with a redirect to a host
// the operator did not allow. Neither the JWT nor a token reaches it.
func TestAttackMintRedirectedElsewhere(t *testing.T) {
	_, cfg, _ := newApp(t)
	var seen atomic.Int32
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { seen.Add(1) }))
	t.Cleanup(elsewhere.Close)
	hostile := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, elsewhere.URL+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	t.Cleanup(hostile.Close)
	cfg.BaseURL = hostile.URL
	app, _ := credential.NewGitHubApp(cfg, []string{hostile.URL})
	_, err := app.Mint(context.Background(), credential.Request{Purpose: credential.Push, Repo: "acme/calc"})
	if err == nil || !strings.Contains(err.Error(), "redirect") {
		t.Fatalf("mint: %v", err)
	}
	if err := app.Revoke(context.Background(), credential.Token{Value: "ghs_" + strings.Repeat("x", 36)}); err == nil {
		t.Fatal("a redirected revocation passed for done")
	}
	if seen.Load() != 0 {
		t.Fatalf("BREACH: the host the redirect named got %d requests", seen.Load())
	}
}

// TestAttackRevokeWhileGitHubIsDown: the node's revocation fails (the API
// answers 502). The failure is in the ledger, the token stays
// outstanding, and the next sweep, GitHub back, revokes it.
func TestAttackRevokeWhileGitHubIsDown(t *testing.T) {
	gh, cfg, _ := newApp(t)
	f := newFront(t, gh)
	cfg.BaseURL = f.URL
	allowed := []string{f.URL}
	in, dir := input(t)
	lease, err := credential.NewLease(context.Background(), in, cfg, allowed, credential.Push, "acme/calc")
	if err != nil {
		t.Fatal(err)
	}
	tok, err := lease.Token()
	if err != nil {
		t.Fatal(err)
	}
	f.fail.Store(true)
	if err := lease.Close(); err == nil || !strings.Contains(err.Error(), "502") {
		t.Fatalf("Close with GitHub down: %v", err)
	}
	if err := credential.Sweep(context.Background(), dir, allowed); err == nil {
		t.Fatal("a sweep with GitHub down reported success")
	}
	ledger, _ := os.ReadFile(filepath.Join(dir, credential.LedgerFile))
	if strings.Count(string(ledger), `"event":"revoke_failed"`) != 2 || gh.TokenStatus(tok, "", "", "") != http.StatusOK {
		t.Fatalf("ledger:\n%s", ledger)
	}
	f.fail.Store(false)
	if err := credential.Sweep(context.Background(), dir, allowed); err != nil {
		t.Fatal(err)
	}
	if got := gh.TokenStatus(tok, "", "", ""); got != http.StatusUnauthorized {
		t.Fatalf("after the sweep: %d", got)
	}
}

// TestLeaseTokenJoinsTheRunRedactor: a minted token is in the run's
// redactor before the node gets it, so any text the run writes later is
// struck of it whichever path it took there.
func TestLeaseTokenJoinsTheRunRedactor(t *testing.T) {
	gh, cfg, _ := newApp(t)
	in, _ := input(t)
	in.Redactor = secrets.New(nil)
	lease, _ := credential.NewLease(context.Background(), in, cfg, []string{gh.API.URL}, credential.Push, "acme/calc")
	defer lease.Close()
	tok, err := lease.Token()
	if err != nil {
		t.Fatal(err)
	}
	// The stateless form GitHub began minting is no 40-character ghs_
	// token: the run's redactor must know the value itself.
	if got := in.Redactor.String("x " + tok + " y"); got != "x [redacted github_app token] y" {
		t.Fatalf("the run's redactor: %q", got)
	}
}
