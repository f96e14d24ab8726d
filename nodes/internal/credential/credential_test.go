package credential_test

import (
	"context"
	"crypto/rsa"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/sandgate/sandgate/internal/ghfake"
	"github.com/sandgate/sandgate/nodes/internal/credential"
	"github.com/sandgate/sandgate/nodes/internal/nodetest"
	"github.com/sandgate/sandgate/runtime"
)

// AppID and InstallationID are the test app's.
const (
	AppID          = nodetest.AppID
	InstallationID = nodetest.InstallationID
)

// newApp is nodetest.NewGitHubApp.
func newApp(t *testing.T) (*ghfake.Server, credential.AppConfig, *rsa.PrivateKey) {
	return nodetest.NewGitHubApp(t)
}

// input is a node's input in a run directory of its own, with the run's
// ledger.
func input(t *testing.T) (*runtime.Input, string) {
	dir := filepath.Join(t.TempDir(), "20250101-000000-abcdef")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	in := &runtime.Input{RunID: filepath.Base(dir), NodeID: "push"}
	credential.ServiceLedger.Set(&in.Services, credential.NewLedger(dir))
	return in, dir
}

// TestMintOneRepositoryRevoke: a push token covers its repository alone
// and contents alone; after Close GitHub refuses it, and revoking a dead
// token again is no error.
func TestMintOneRepositoryRevoke(t *testing.T) {
	gh, cfg, _ := newApp(t)
	app, err := credential.NewGitHubApp(cfg, []string{gh.API.URL})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	tok, err := app.Mint(ctx, credential.Request{Run: "r", Purpose: credential.Push, Repo: "acme/calc"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(tok.Value, "ghs_") || time.Until(tok.Expires) < 50*time.Minute {
		t.Fatalf("token %q expiring %s", tok.Value[:4], tok.Expires)
	}
	m := gh.Minted()
	if len(m) != 1 || strings.Join(m[0].Repos, ",") != "acme/calc" || len(m[0].Permissions) != 1 || m[0].Permissions["contents"] != "write" {
		t.Fatalf("minted %+v", m)
	}
	for _, c := range []struct {
		repo, perm, level string
		want              int
	}{
		{"acme/calc", "contents", "write", 200},
		{"acme/docs", "contents", "write", 404},      // another repository of the installation
		{"acme/calc", "pull_requests", "write", 403}, // another permission
	} {
		if got := gh.TokenStatus(tok.Value, c.repo, c.perm, c.level); got != c.want {
			t.Errorf("%s %s:%s: %d, want %d", c.repo, c.perm, c.level, got, c.want)
		}
	}
	if err := app.Revoke(ctx, tok); err != nil {
		t.Fatal(err)
	}
	if got := gh.TokenStatus(tok.Value, "acme/calc", "contents", "write"); got != http.StatusUnauthorized {
		t.Fatalf("a revoked token: %d, want 401", got)
	}
	if err := app.Revoke(ctx, tok); err != nil {
		t.Fatalf("revoking a dead token: %v", err)
	}
}

// TestMintRefusals: a repository outside the installation, a key that is
// not the app's, and a JWT that expired or lives too long are refused as
// GitHub refuses them, and the node's error says which.
func TestMintRefusals(t *testing.T) {
	gh, cfg, key := newApp(t)
	app, _ := credential.NewGitHubApp(cfg, []string{gh.API.URL})
	_, err := app.Mint(context.Background(), credential.Request{Purpose: credential.Push, Repo: "acme/other"})
	want := "github_app installation 77: mint a token for acme/other (contents: write): GitHub answered 422 Unprocessable Entity: There is at least one repository that does not exist or is not accessible to the parent installation."
	if err == nil || err.Error() != want {
		t.Fatalf("another repository: %v\nwant %s", err, want)
	}
	_, other, _ := newApp(t) // a second app's key, signing for this app's id
	other.BaseURL = gh.API.URL
	forger, _ := credential.NewGitHubApp(other, []string{gh.API.URL})
	_, err = forger.Mint(context.Background(), credential.Request{Purpose: credential.Push, Repo: "acme/calc"})
	if err == nil || !strings.Contains(err.Error(), "401 Unauthorized: A JSON web token could not be decoded") {
		t.Fatalf("forged JWT: %v", err)
	}
	now := time.Now()
	for _, c := range []struct {
		name     string
		iat, exp time.Time
		want     string
	}{
		{"expired", now.Add(-20 * time.Minute), now.Add(-10 * time.Minute), "'Expiration time' claim ('exp') must be a numeric value"},
		{"too long", now.Add(-time.Minute), now.Add(time.Hour), "is too far in the future"},
	} {
		raw, _ := jwt.NewWithClaims(jwt.SigningMethodRS256, jwt.RegisteredClaims{Issuer: "4242", IssuedAt: jwt.NewNumericDate(c.iat), ExpiresAt: jwt.NewNumericDate(c.exp)}).SignedString(key)
		req, _ := http.NewRequest(http.MethodPost, gh.API.URL+"/app/installations/77/access_tokens", strings.NewReader(`{}`))
		req.Header.Set("Authorization", "Bearer "+raw)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		_, _ = io.Copy(&b, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(b.String(), c.want) {
			t.Errorf("%s JWT: %d %s", c.name, resp.StatusCode, b.String())
		}
	}
	if m := gh.Minted(); len(m) != 0 {
		t.Fatalf("tokens were minted: %+v", m)
	}
}

// revocations counts the DELETE /installation/token requests the double
// answered.
func revocations(gh *ghfake.Server) int {
	n := 0
	for _, r := range gh.Requests() {
		if r.Path == "/installation/token" {
			n++
		}
	}
	return n
}

// TestLedgerRevokesAfterTheHarnessDied: a lease's token is in the ledger,
// sealed, before the node gets it; the harness dies without closing the
// lease, and the sweep a resume or prune runs revokes it from the ledger
// alone. Without the operator's allowance for the API it sends nothing
// there and keeps the entry. A lease closed in time leaves nothing to
// sweep.
func TestLedgerRevokesAfterTheHarnessDied(t *testing.T) {
	gh, cfg, _ := newApp(t)
	allowed := []string{gh.API.URL}
	in, dir := input(t)
	ctx := context.Background()
	lease, err := credential.NewLease(ctx, in, cfg, allowed, credential.Push, "acme/calc")
	if err != nil {
		t.Fatal(err)
	}
	tok, err := lease.Token()
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := lease.Token(); again != tok || len(gh.Minted()) != 1 {
		t.Fatalf("a live token was minted again (%d minted)", len(gh.Minted()))
	}
	ledger, err := os.ReadFile(filepath.Join(dir, credential.LedgerFile))
	if err != nil || !strings.Contains(string(ledger), `"event":"minted"`) || !strings.Contains(string(ledger), `"sealed":"`) {
		t.Fatalf("ledger %s (%v)", ledger, err)
	}
	if nodetest.FileHolds(filepath.Join(dir, credential.LedgerFile), tok) || strings.Contains(string(ledger), tok[4:]) {
		t.Fatal("BREACH: the ledger holds the token in clear")
	}
	// The harness dies here: the lease is never closed.
	if err := credential.Sweep(ctx, dir, nil); err == nil || !strings.Contains(err.Error(), "the blueprint would send a credential to "+gh.API.URL) {
		t.Fatalf("a sweep without the allowance: %v", err)
	}
	if revocations(gh) != 0 || gh.TokenStatus(tok, "acme/calc", "contents", "write") != http.StatusOK {
		t.Fatal("the token went to an API the operator did not allow")
	}
	if err := credential.Sweep(ctx, dir, allowed); err != nil {
		t.Fatal(err)
	}
	if got := gh.TokenStatus(tok, "acme/calc", "contents", "write"); got != http.StatusUnauthorized {
		t.Fatalf("after the sweep the token answers %d, want 401", got)
	}
	if err := credential.Sweep(ctx, dir, allowed); err != nil || revocations(gh) != 1 {
		t.Fatalf("a second sweep: %v, %d revocations", err, revocations(gh))
	}

	in2, dir2 := input(t)
	lease, _ = credential.NewLease(ctx, in2, cfg, allowed, credential.Review, "acme/calc")
	tok, _ = lease.Token()
	if err := lease.Close(); err != nil {
		t.Fatal(err)
	}
	if got := gh.TokenStatus(tok, "acme/calc", "pull_requests", "write"); got != http.StatusUnauthorized {
		t.Fatalf("after Close: %d", got)
	}
	if _, err := lease.Token(); err == nil {
		t.Fatal("a closed lease minted")
	}
	if err := credential.Sweep(ctx, dir2, allowed); err != nil || revocations(gh) != 2 {
		t.Fatalf("sweep after Close: %v, %d revocations", err, revocations(gh))
	}
	if msg := lease.Redact("push failed: " + tok); strings.Contains(msg, tok) {
		t.Fatalf("Redact kept the token: %s", msg)
	}
}
