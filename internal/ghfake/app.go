package ghfake

import (
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"fmt"
	"math/big"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// App is a GitHub App the double knows: its id, the public half of its
// private key, and its installation with the repositories (owner/name)
// and permissions the installation was granted.
type App struct {
	ID             int64
	Key            *rsa.PublicKey
	InstallationID int64
	Repos          []string
	// Permissions the installation holds; nil means contents,
	// pull_requests write and checks, statuses read.
	Permissions map[string]string
}

// Minted is one installation token the double issued.
type Minted struct {
	Token       string
	Repos       []string
	Permissions map[string]string
	Expires     time.Time
	Revoked     bool
}

// Token statuses TokenStatus answers besides http.StatusOK.
var (
	installationTokenRE = regexp.MustCompile(`^/app/installations/(\d+)/access_tokens$`)
	repoPathRE          = regexp.MustCompile(`^/repos/([^/]+/[^/]+)(/.*)?$`)
)

// TokenTTL is how long an installation token lives, as on GitHub.
const TokenTTL = time.Hour

// AddApp registers a GitHub App and its installation.
func (s *Server) AddApp(a App) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if a.Permissions == nil {
		a.Permissions = map[string]string{"contents": "write", "pull_requests": "write", "checks": "read", "statuses": "read", "metadata": "read"}
	}
	s.apps = append(s.apps, a)
}

// Minted returns the installation tokens issued so far.
func (s *Server) Minted() []Minted {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Minted
	for _, m := range s.tokens {
		out = append(out, *m)
	}
	slices.SortFunc(out, func(a, b Minted) int { return a.Expires.Compare(b.Expires) })
	return out
}

// Expire makes every token the double issued expired, as an hour passing
// would.
func (s *Server) Expire() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, m := range s.tokens {
		m.Expires = time.Now().Add(-time.Second)
	}
}

// TokenStatus is what GitHub answers a request with the installation
// token tok to repository repo (owner/name) needing permission perm at
// level (read or write): 200 when it may, 401 for a token unknown, revoked
// or expired, 404 for a repository the token does not cover (GitHub hides
// what a token cannot see), 403 for a permission it lacks. The git
// server double asks it for every push request.
func (s *Server) TokenStatus(tok, repo, perm, level string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tokenStatus(tok, repo, perm, level)
}

func (s *Server) tokenStatus(tok, repo, perm, level string) int {
	m := s.tokens[tok]
	switch {
	case m == nil || m.Revoked || !time.Now().Before(m.Expires):
		return http.StatusUnauthorized
	case repo != "" && !slices.Contains(m.Repos, repo):
		return http.StatusNotFound
	case perm != "" && !permits(m.Permissions[perm], level):
		return http.StatusForbidden
	}
	return http.StatusOK
}

func permits(have, want string) bool {
	return have == "write" || (have == "read" && want == "read")
}

// appRoute answers the App endpoints and requests carrying an
// installation token; false leaves the request to the other routes (the
// fixed token's).
func (s *Server) appRoute(w http.ResponseWriter, r *http.Request) bool {
	auth := r.Header.Get("Authorization")
	tok := strings.TrimPrefix(strings.TrimPrefix(auth, "Bearer "), "token ")
	if m := installationTokenRE.FindStringSubmatch(r.URL.Path); m != nil && r.Method == http.MethodPost {
		id, _ := strconv.ParseInt(m[1], 10, 64)
		s.mintToken(w, r, tok, id)
		return true
	}
	if r.URL.Path == "/installation/token" && r.Method == http.MethodDelete {
		if s.tokenStatus(tok, "", "", "") != http.StatusOK {
			writeJSON(w, http.StatusUnauthorized, badCredentials)
			return true
		}
		s.tokens[tok].Revoked = true
		w.WriteHeader(http.StatusNoContent)
		return true
	}
	if _, ok := s.tokens[tok]; !ok {
		return false
	}
	s.tokenRoute(w, r, tok)
	return true
}

var badCredentials = map[string]any{"message": "Bad credentials", "documentation_url": "https://docs.github.com/rest"}

// tokenRoute serves a repository endpoint to an installation token:
// opening a pull request, and the ci endpoints when the token may read
// them.
func (s *Server) tokenRoute(w http.ResponseWriter, r *http.Request, tok string) {
	m := repoPathRE.FindStringSubmatch(r.URL.Path)
	if m == nil {
		writeJSON(w, http.StatusForbidden, notAccessible)
		return
	}
	perm, level := "metadata", "read"
	switch rest := m[2]; {
	case rest == "/pulls" && r.Method == http.MethodPost, pullReviewRE.MatchString(rest) && r.Method == http.MethodPost,
		pullRE.MatchString(rest) && r.Method == http.MethodPatch:
		perm, level = "pull_requests", "write"
	case pullMergeRE.MatchString(rest) && r.Method == http.MethodPut:
		perm, level = "contents", "write"
	case strings.HasSuffix(rest, "/check-runs"):
		perm = "checks"
	case strings.HasSuffix(rest, "/status"):
		perm = "statuses"
	case strings.Contains(rest, "/protection/"):
		perm = "administration"
	}
	switch st := s.tokenStatus(tok, m[1], perm, level); st {
	case http.StatusUnauthorized:
		writeJSON(w, st, badCredentials)
		return
	case http.StatusNotFound:
		writeJSON(w, st, map[string]any{"message": "Not Found", "documentation_url": "https://docs.github.com/rest"})
		return
	case http.StatusForbidden:
		writeJSON(w, st, notAccessible)
		return
	}
	if pullReviewRE.MatchString(m[2]) || pullMergeRE.MatchString(m[2]) {
		s.acts = append(s.acts, Act{Method: r.Method, Repo: m[1], Path: m[2]})
		writeJSON(w, http.StatusOK, map[string]any{"id": len(s.acts), "state": "APPROVED", "merged": true, "sha": strings.Repeat("c", 40)})
		return
	}
	s.route(w, r)
}

var notAccessible = map[string]any{"message": "Resource not accessible by integration", "documentation_url": "https://docs.github.com/rest"}

var (
	pullReviewRE = regexp.MustCompile(`^/pulls/\d+/reviews$`)
	pullMergeRE  = regexp.MustCompile(`^/pulls/\d+/merge$`)
)

// Act is an approval (POST .../pulls/N/reviews) or a merge (PUT
// .../pulls/N/merge) made with an installation token allowed to.
type Act struct{ Method, Repo, Path string }

// Acts returns the approvals and merges made so far.
func (s *Server) Acts() []Act {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Act(nil), s.acts...)
}

// Pull is a pull request opened (pulls.go); Updates counts the PATCHes
// it received.
type Pull struct {
	Repo, Title, Head, Base string
	Draft                   bool
	Updates                 int
}

// Pulls returns the pull requests opened so far.
func (s *Server) Pulls() []Pull {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Pull(nil), s.pulls...)
}

// mintToken is POST /app/installations/{id}/access_tokens: the JWT must
// be RS256-signed by the app's key, issued by its id, unexpired and
// living at most ten minutes; the repositories asked for must belong to
// the installation and the permissions must not exceed its own.
func (s *Server) mintToken(w http.ResponseWriter, r *http.Request, raw string, installation int64) {
	app, msg := s.verifyJWT(raw)
	if app == nil {
		writeJSON(w, http.StatusUnauthorized, map[string]any{"message": msg, "documentation_url": "https://docs.github.com/rest"})
		return
	}
	if app.InstallationID != installation {
		writeJSON(w, http.StatusNotFound, map[string]any{"message": "Not Found", "documentation_url": "https://docs.github.com/rest/apps/apps#create-an-installation-access-token-for-an-app"})
		return
	}
	var body struct {
		Repositories []string          `json:"repositories"`
		Permissions  map[string]string `json:"permissions"`
	}
	_ = json.NewDecoder(r.Body).Decode(&body)
	owner, _, _ := strings.Cut(app.Repos[0], "/")
	repos := slices.Clone(app.Repos)
	if len(body.Repositories) > 0 {
		repos = nil
		for _, name := range body.Repositories {
			if !slices.Contains(app.Repos, owner+"/"+name) {
				writeJSON(w, http.StatusUnprocessableEntity, map[string]any{"message": "There is at least one repository that does not exist or is not accessible to the parent installation.",
					"documentation_url": "https://docs.github.com/rest/apps/apps#create-an-installation-access-token-for-an-app", "status": "422"})
				return
			}
			repos = append(repos, owner+"/"+name)
		}
	}
	perms := app.Permissions
	if body.Permissions != nil {
		for k, v := range body.Permissions {
			if !permits(app.Permissions[k], v) {
				writeJSON(w, http.StatusUnprocessableEntity, map[string]any{"message": "The permissions requested are not granted to this installation.",
					"documentation_url": "https://docs.github.com/rest/apps/apps#create-an-installation-access-token-for-an-app", "status": "422"})
				return
			}
		}
		perms = body.Permissions
	}
	m := &Minted{Token: newToken(), Repos: repos, Permissions: perms, Expires: time.Now().Add(TokenTTL).Truncate(time.Second)}
	s.tokens[m.Token] = m
	var list []map[string]any
	for i, full := range repos {
		list = append(list, map[string]any{"id": 1296269 + i, "name": strings.TrimPrefix(full, owner+"/"), "full_name": full, "private": true})
	}
	writeJSON(w, http.StatusCreated, map[string]any{"token": m.Token, "expires_at": m.Expires.UTC().Format(time.RFC3339),
		"permissions": perms, "repository_selection": "selected", "repositories": list})
}

// verifyJWT returns the app that signed raw, or GitHub's message for a
// JWT it refuses.
func (s *Server) verifyJWT(raw string) (*App, string) {
	var app *App
	claims := jwt.RegisteredClaims{}
	_, err := jwt.ParseWithClaims(raw, &claims, func(t *jwt.Token) (any, error) {
		iss, _ := t.Claims.GetIssuer()
		for i := range s.apps {
			if strconv.FormatInt(s.apps[i].ID, 10) == iss {
				app = &s.apps[i]
				return app.Key, nil
			}
		}
		return nil, fmt.Errorf("unknown issuer %q", iss)
	}, jwt.WithValidMethods([]string{"RS256"}), jwt.WithExpirationRequired(), jwt.WithIssuedAt(), jwt.WithLeeway(0))
	switch {
	case err != nil && strings.Contains(err.Error(), "expired"):
		return nil, "'Expiration time' claim ('exp') must be a numeric value representing the future time at which the assertion expires"
	case err != nil:
		return nil, "A JSON web token could not be decoded"
	case time.Until(claims.ExpiresAt.Time) > 10*time.Minute+time.Second:
		return nil, "'Expiration time' claim ('exp') is too far in the future"
	}
	return app, ""
}

// newToken is an installation token in GitHub's format: ghs_ and 36
// characters.
func newToken() string {
	const alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	b := make([]byte, 36)
	for i := range b {
		n, _ := rand.Int(rand.Reader, big.NewInt(int64(len(alnum))))
		b[i] = alnum[n.Int64()]
	}
	return "ghs_" + string(b)
}
