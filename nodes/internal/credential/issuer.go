package credential

import (
	"context"
	"strings"
	"time"
)

// Purpose is what a node needs a token for.
type Purpose string

// The purposes of the built-in nodes.
const (
	Push   Purpose = "git_push"
	Review Purpose = "review"
	CI     Purpose = "ci"
	// Merge is approving a queued review by merging its pull request.
	Merge Purpose = "merge"
)

// Permissions are the GitHub App permissions a purpose needs and nothing
// more: pushing writes contents; a review opens a pull request (and
// approving it approves or marks it ready); ci reads check runs and
// commit statuses; merging a pull request writes contents.
func Permissions(p Purpose) map[string]string {
	switch p {
	case Push:
		return map[string]string{"contents": "write"}
	case Review:
		return map[string]string{"pull_requests": "write"}
	case CI:
		return map[string]string{"checks": "read", "statuses": "read"}
	case Merge:
		// GitHub's merge endpoint writes the base branch: contents.
		return map[string]string{"contents": "write"}
	}
	return nil
}

// Request asks for a token for one run, one purpose and one repository.
type Request struct {
	Run     string
	Purpose Purpose
	// Repo is owner/name.
	Repo string
}

// Token is a minted credential and when it dies on the issuer's side.
type Token struct {
	Value   string
	Expires time.Time
}

// Issuer mints tokens and takes them back. Revoking a token that is
// already dead (revoked, expired) is not an error.
type Issuer interface {
	Mint(ctx context.Context, r Request) (Token, error)
	Revoke(ctx context.Context, t Token) error
}

// Durable is an Issuer whose tokens the ledger can revoke after the
// harness that minted them is gone: Recipe is its configuration (no
// secret) for the ledger, and SealKey the key the ledger seals the run's
// tokens with, derived from a secret the configuration names.
type Durable interface {
	Issuer
	Recipe() Recipe
	SealKey(run string) ([]byte, error)
}

// Recipe rebuilds an issuer: what the ledger records beside a token.
type Recipe struct {
	GitHubApp *AppConfig `json:"github_app,omitempty"`
}

// Issuer builds the issuer the recipe names.
func (r Recipe) Issuer(allowed []string) (Durable, error) {
	return NewGitHubApp(*r.GitHubApp, allowed)
}

// redact replaces each token's value in s.
func redact(s string, toks []string) string {
	for _, t := range toks {
		if t != "" {
			s = strings.ReplaceAll(s, t, "[redacted minted token]")
		}
	}
	return s
}
