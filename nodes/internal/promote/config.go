package promote

import (
	"net/mail"
	"strings"

	"github.com/sandgate/sandgate/blueprint"
	"github.com/sandgate/sandgate/nodes/internal/credential"
	"github.com/sandgate/sandgate/nodes/internal/gitremote"
)

// The configuration of each built-in node type, declared once: the tags
// drive validation, the JSON Schema and docs (blueprint.Configured), and
// factories receive the decoded, defaulted struct (blueprint.Decode). The
// Validate methods run when a blueprint loads (sandgate validate, and run
// before anything runs) and again in guard before a factory builds the
// node, so a configuration is refused at its field, with a caret, and never
// accepted by validation only to be refused by the factory.

// GitCommitConfig configures git_commit nodes.
type GitCommitConfig struct {
	Message string `sg:"message" doc:"commit message"`
	Branch  string `sg:"branch" doc:"branch name (default sandgate/<run-id>)"`
	Author  string `sg:"author,default=sandgate <sandgate@localhost>" doc:"Name <email>"`
}

// Validate refuses an author that is not "Name <email>" and a branch name
// git would Refuse, before any agent work is spent.
func (c *GitCommitConfig) Validate(n *blueprint.Node) []blueprint.Diagnostic {
	var ds []blueprint.Diagnostic
	if _, err := mail.ParseAddress(c.Author); err != nil {
		ds = append(ds, n.ErrorAt("author", -1, "want \"Name <email>\", got %q: %v", c.Author, err))
	}
	// A templated branch is checked once rendered, when the node runs.
	if b := c.Branch; b != "" && !strings.Contains(b, "${{") && !gitremote.ValidBranch(b) {
		ds = append(ds, n.ErrorAt("branch", -1, "invalid branch name %q", b))
	}
	return ds
}

// GitPushConfig configures git_push nodes.
type GitPushConfig struct {
	Remote         string `sg:"remote,required,endpoint,keyoptional,trusted=https://github.com" doc:"remote URL or path (used by the harness's git client, never a shell); with token_env, an https://github.com URL or one under a prefix the operator allows (--allow-endpoint)"`
	TokenEnv       string `sg:"token_env,notemplate,credential" doc:"environment variable holding an HTTP token, sent only to the remote's host and only for an http(s) remote on https://github.com or under an --allow-endpoint prefix"`
	DeleteOnReject bool   `sg:"delete_on_reject" doc:"when the change is rejected in the local review queue (sandgate review reject), delete the pushed branch on the remote, only if it still points at the pushed commit"`
	Credentials    any    `sg:"credentials,notemplate" doc:"instead of token_env, a token minted for this push: {github_app: {app_id_env: VAR holding the app's id, key_file: absolute path of its private key, installation_id: N, base_url: API base (default api.github.com, HOST/api/v3 for another host)}}; it may write contents of the remote's repository and nothing else, and is revoked once the push is done"`
}

// Validate checks a credentials issuer and that the remote it mints for
// names a repository.
func (c *GitPushConfig) Validate(n *blueprint.Node) []blueprint.Diagnostic {
	ds := credential.Check(n)
	if _, ok := n.Config[credential.Field]; ok && !strings.Contains(c.Remote, "${{") && gitremote.RepoOf(c.Remote) == "" {
		ds = append(ds, n.ErrorAt("remote", -1, "credentials mint a token for one repository: want a remote URL ending in owner/name, got %q", c.Remote))
	}
	return ds
}
