package review

import (
	"strings"
	"time"

	"github.com/sandgate/sandgate/blueprint"
	"github.com/sandgate/sandgate/nodes/internal/credential"
	"github.com/sandgate/sandgate/nodes/reviewqueue"
)

// The configuration of each built-in node type, declared once: the tags
// drive validation, the JSON Schema and docs (blueprint.Configured), and
// factories receive the decoded, defaulted struct (blueprint.Decode). The
// Validate methods run when a blueprint loads (sandgate validate, and run
// before anything runs) and again in guard before a factory builds the
// node, so a configuration is refused at its field, with a caret, and never
// accepted by validation only to be refused by the factory.

// ReviewConfig configures review nodes. Dir has no static default: it is
// the registry's Options.ReviewDir, else .sandgate/reviews.
type ReviewConfig struct {
	Queue    string `sg:"queue,enum=local|github,default=local" doc:"local or github"`
	Title    string `sg:"title" doc:"review title"`
	Repo     string `sg:"repo,notemplate" doc:"owner/name, for github"`
	Base     string `sg:"base,notemplate,default=main" doc:"base branch, for github"`
	BaseURL  string `sg:"base_url,notemplate,endpoint,trusted=https://api.github.com,default=https://api.github.com" doc:"API base URL, for GitHub Enterprise; any other needs the operator's --allow-endpoint"`
	TokenEnv string `sg:"token_env,notemplate,credential,default=GITHUB_TOKEN" doc:"environment variable holding the token"`
	// Credentials mints the token per review instead (credential.Parse).
	Credentials any    `sg:"credentials,notemplate" doc:"for github, instead of token_env, a token minted for this review: {github_app: {app_id_env: VAR holding the app's id, key_file: absolute path of its private key, installation_id: N}}, sent to base_url; it may write pull requests of repo and nothing else, and is revoked once the node is done"`
	Dir         string `sg:"dir,notemplate" doc:"local queue directory (default .sandgate/reviews)"`
	// OnApprove is what sandgate review approve does; the node records it
	// in the queue entry, so approving needs no blueprint.
	OnApprove map[string]string `sg:"on_approve,notemplate" doc:"what sandgate review approve does. Queue local: {merge_into: BRANCH, method: ff (default) or merge, remote: URL or path, by default the remote a git_push node pushed to}. Queue github: {github: ready, approve or merge; merge_method: merge, squash or rebase} (with ready the pull request opens as a draft)"`
	// Wait makes the node wait for the reviewers' decision; zero hands
	// the change over and passes at once.
	Wait time.Duration `sg:"wait" doc:"wait this long for a decision: approved passes; changes requested (sandgate review reject --note, or a GitHub review requesting changes on the reviewed commit) fails with the reviewers' comments as feedback, for an on_fail edge back to the agent; no decision in time fails with decision timed_out. The wait survives a restart (its start is recorded in the run)"`
}

// Validate refuses a credentials issuer it cannot use, a negative wait, a
// GitHub review without the repository to open the pull request in, and
// an on_approve the queue cannot carry out.
func (c *ReviewConfig) Validate(n *blueprint.Node) []blueprint.Diagnostic {
	ds := credential.Check(n)
	if _, ok := n.Config[credential.Field]; ok && c.Queue != "github" {
		ds = append(ds, n.ErrorAt(credential.Field, -1, "credentials are for queue github; a local queue sends no token"))
	}
	return append(ds, c.validateQueue(n)...)
}

func (c *ReviewConfig) validateQueue(n *blueprint.Node) []blueprint.Diagnostic {
	if c.Wait < 0 {
		return []blueprint.Diagnostic{n.ErrorAt("wait", -1, "want a positive duration such as 24h, got %s", c.Wait)}
	}
	if _, err := reviewqueue.ParseOnApprove(c.Queue, c.OnApprove); err != nil {
		return []blueprint.Diagnostic{n.ErrorAt("on_approve", -1, "%v", err)}
	}
	if c.Queue != "github" || strings.Contains(c.Repo, "/") {
		return nil
	}
	if c.Repo != "" {
		return []blueprint.Diagnostic{n.ErrorAt("repo", -1, "want owner/name for queue github, got %q", c.Repo)}
	}
	return []blueprint.Diagnostic{n.ErrorAt("queue", -1, "queue github needs repo: owner/name")}
}
