package credential

import (
	"context"
	"crypto/hkdf"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/sandgate/sandgate/internal/ghapp"
	"github.com/sandgate/sandgate/nodes/internal/github"
)

// AppConfig is a blueprint's github_app credential (ghapp.Config: it
// lives in a leaf package so the records that carry it need not import
// this one).
type AppConfig = ghapp.Config

// GitHubApp mints installation tokens limited to one repository and the
// purpose's permissions.
type GitHubApp struct {
	cfg     AppConfig
	key     *rsa.PrivateKey
	allowed []string
}

var _ Durable = (*GitHubApp)(nil)

// NewGitHubApp reads the app's private key; allowed are the operator's
// URL prefixes (--allow-endpoint) the JWT and tokens may go to besides
// https://api.github.com.
func NewGitHubApp(c AppConfig, allowed []string) (*GitHubApp, error) {
	key, err := ReadKey(c.KeyFile)
	if err != nil {
		return nil, err
	}
	if c.BaseURL == "" {
		c.BaseURL = github.APIBase
	}
	return &GitHubApp{cfg: c, key: key, allowed: allowed}, nil
}

// ReadKey reads a GitHub App's private key: PEM, PKCS#1 as GitHub hands
// it out, or PKCS#8.
func ReadKey(path string) (*rsa.PrivateKey, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("key_file: %w", err)
	}
	block, _ := pem.Decode(b)
	if block == nil {
		return nil, fmt.Errorf("key_file %s: not a PEM private key", path)
	}
	if k, err := x509.ParsePKCS1PrivateKey(block.Bytes); err == nil {
		return k, nil
	}
	k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if rk, ok := k.(*rsa.PrivateKey); ok && err == nil {
		return rk, nil
	}
	return nil, fmt.Errorf("key_file %s: not an RSA private key (GitHub App keys are RSA)", path)
}

// Recipe implements Durable.
func (a *GitHubApp) Recipe() Recipe { c := a.cfg; return Recipe{GitHubApp: &c} }

// SealKey implements Durable: HKDF-SHA256 of the private key, salted with
// the run's id.
func (a *GitHubApp) SealKey(run string) ([]byte, error) {
	return hkdf.Key(sha256.New, x509.MarshalPKCS1PrivateKey(a.key), []byte(run), "sandgate credential ledger v1", 32)
}

// jwt is the app's JSON web token: issued a minute ago against clock
// drift, expiring in nine minutes (GitHub refuses more than ten).
func (a *GitHubApp) jwt() (string, error) {
	id := strings.TrimSpace(os.Getenv(a.cfg.AppIDEnv))
	if id == "" {
		return "", fmt.Errorf("github_app: app_id_env %s is not set in the harness environment", a.cfg.AppIDEnv)
	}
	now := time.Now()
	claims := jwt.RegisteredClaims{Issuer: id, IssuedAt: jwt.NewNumericDate(now.Add(-time.Minute)), ExpiresAt: jwt.NewNumericDate(now.Add(9 * time.Minute))}
	return jwt.NewWithClaims(jwt.SigningMethodRS256, claims).SignedString(a.key)
}

func (a *GitHubApp) client(token func() (string, error)) *github.Client {
	return &github.Client{Base: a.cfg.BaseURL, Allowed: a.allowed, Token: token, Name: "github_app base_url", Timeout: 30 * time.Second, MaxBody: 1 << 20}
}

// Mint implements Issuer: POST /app/installations/{id}/access_tokens for
// the one repository and the purpose's permissions. What GitHub answers
// is checked against what was asked: a token that covers another or a
// further repository, or more than the purpose's permissions, is revoked
// at once and refused.
func (a *GitHubApp) Mint(ctx context.Context, r Request) (Token, error) {
	perms := Permissions(r.Purpose)
	if err := CheckRepo(r.Repo); err != nil || perms == nil {
		return Token{}, fmt.Errorf("github_app: want owner/name and a known purpose, got %q for %q", r.Repo, r.Purpose)
	}
	_, name, _ := strings.Cut(r.Repo, "/")
	what := fmt.Sprintf("github_app installation %d: mint a token for %s (%s)", a.cfg.InstallationID, r.Repo, describe(perms))
	path := fmt.Sprintf("/app/installations/%d/access_tokens", a.cfg.InstallationID)
	rep, err := a.client(a.jwt).Do(ctx, http.MethodPost, path, map[string]any{"repositories": []string{name}, "permissions": perms})
	if err != nil {
		return Token{}, fmt.Errorf("%s: %w", what, err)
	}
	var out grant
	_ = json.Unmarshal(rep.Body, &out)
	if rep.Status != http.StatusCreated || out.Token == "" {
		return Token{}, fmt.Errorf("%s: GitHub answered %d %s: %s", what, rep.Status, http.StatusText(rep.Status), redact(out.APIError.String(), []string{out.Token}))
	}
	t := Token{Value: out.Token, Expires: out.Expires}
	if wider := out.wider(r.Repo, perms); wider != "" {
		rerr := a.Revoke(context.WithoutCancel(ctx), t)
		return Token{}, errors.Join(fmt.Errorf("%s: refused: GitHub granted %s", what, wider), rerr)
	}
	return t, nil
}

// grant is GitHub's answer to a token request.
type grant struct {
	github.APIError
	Token        string            `json:"token"`
	Expires      time.Time         `json:"expires_at"`
	Permissions  map[string]string `json:"permissions"`
	Repositories []struct {
		FullName string `json:"full_name"`
	} `json:"repositories"`
}

// wider says how the grant exceeds one repository and perms (GitHub adds
// metadata: read to every token); empty when it does not.
func (g grant) wider(repo string, perms map[string]string) string {
	if len(g.Repositories) != 1 || !strings.EqualFold(g.Repositories[0].FullName, repo) {
		var names []string
		for _, r := range g.Repositories {
			names = append(names, r.FullName)
		}
		return fmt.Sprintf("repositories %q, not %s alone", names, repo)
	}
	for _, k := range slices.Sorted(maps.Keys(g.Permissions)) {
		v := g.Permissions[k]
		if want, ok := perms[k]; (!ok && !(k == "metadata" && v == "read")) || (ok && v != want && v != "read") {
			return fmt.Sprintf("%s: %s beyond %s", k, v, describe(perms))
		}
	}
	return ""
}

var (
	ownerRE = regexp.MustCompile(`^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})$`)
	nameRE  = regexp.MustCompile(`^[A-Za-z0-9._-]{1,100}$`)
)

// CheckRepo refuses what is not a GitHub owner/name: a path with more
// segments or dot segments, and any character GitHub does not allow in
// a name (so no look-alike letters, separators or control characters).
func CheckRepo(repo string) error {
	owner, name, ok := strings.Cut(repo, "/")
	if !ok || !ownerRE.MatchString(owner) || !nameRE.MatchString(name) || name == "." || name == ".." {
		return fmt.Errorf("%q is not a GitHub owner/name", repo)
	}
	return nil
}

func describe(perms map[string]string) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(perms)) {
		parts = append(parts, k+": "+perms[k])
	}
	return strings.Join(parts, ", ")
}

// Revoke implements Issuer: DELETE /installation/token, authenticated by
// the token itself. A 401 means GitHub no longer takes the token (revoked
// or expired): it is dead, as revoking wanted.
func (a *GitHubApp) Revoke(ctx context.Context, t Token) error {
	rep, err := a.client(func() (string, error) { return t.Value, nil }).Do(ctx, http.MethodDelete, "/installation/token", nil)
	if err != nil {
		return fmt.Errorf("github_app: revoke: %s", redact(err.Error(), []string{t.Value}))
	}
	switch rep.Status {
	case http.StatusNoContent, http.StatusUnauthorized:
		return nil
	}
	return fmt.Errorf("github_app: revoke: GitHub answered %d %s", rep.Status, http.StatusText(rep.Status))
}
