package nodes

import "github.com/sandgate/sandgate/nodes/internal/github"

// GitHubAPI is the one GitHub client (nodes/internal/github) for callers
// outside nodes: sandgate serve's triggers answer on issues with it.
type GitHubAPI = github.Client

// GitHubFromEnv is a client for the API at base whose token is read from
// the variable tokenEnv at each request, sent only under base when base
// is GitHub's API or one of allowed (--allow-endpoint); name names base's
// setting in a refusal.
func GitHubFromEnv(base, tokenEnv, name string, allowed []string) *GitHubAPI {
	c := github.FromEnv(base, tokenEnv, allowed)
	c.Name = name
	return c
}

// CheckGitHubURL refuses a GitHub API URL a token may not go to: one not
// under GitHub's API nor one of allowed.
func CheckGitHubURL(url string, allowed []string) error { return github.CheckURL(url, allowed) }
