package ci

import (
	"regexp"
	"strings"
	"time"

	"github.com/sandgate/sandgate/blueprint"
	"github.com/sandgate/sandgate/nodes/internal/credential"
)

// The configuration of each built-in node type, declared once: the tags
// drive validation, the JSON Schema and docs (blueprint.Configured), and
// factories receive the decoded, defaulted struct (blueprint.Decode). The
// Validate methods run when a blueprint loads (sandgate validate, and run
// before anything runs) and again in guard before a factory builds the
// node, so a configuration is refused at its field, with a caret, and never
// accepted by validation only to be refused by the factory.

// CIConfig configures ci nodes. Their wait is bounded by the node's
// common timeout key, 30m when it is not set (see ciDefaultTimeout).
type CIConfig struct {
	Provider string            `sg:"provider,required,enum=github|command" doc:"github: the check runs and commit statuses GitHub reports for the pushed commit; command: run: in a fresh box built from the pushed commit alone"`
	Run      blueprint.Command `sg:"run,notemplate" doc:"for command: the CI command (e.g. bash .ci/run), a shell line or {argv: [...]}; go test -json output is read like the test gate's"`
	Checks   []string          `sg:"checks,notemplate" doc:"for github: check or status names that must pass (default: the branch's required status checks, else every check reported)"`
	LogLines int               `sg:"log_lines,default=80" doc:"log lines kept per failing check in the feedback (8 KB in all)"`
	Poll     time.Duration     `sg:"poll,default=10s" doc:"for github: the first wait between polls; it doubles up to 8 times this, and GitHub's rate-limit headers lengthen it"`
	Repo     string            `sg:"repo" doc:"for github: owner/name (default: the last two path elements of the pushed remote's URL); may name an input, checked again once rendered"`
	BaseURL  string            `sg:"base_url,endpoint,trusted=https://api.github.com,default=https://api.github.com" doc:"for github: API base URL, for GitHub Enterprise; any other needs the operator's --allow-endpoint, checked again once rendered when it names an input"`
	Commit   string            `sg:"commit,enum=pushed|base,default=pushed" doc:"the commit CI judges: pushed (the commit the run's git_push recorded, refused unless it is the run's latest commit and the workspace still holds it) or base (the commit the run started from, which it did not push, e.g. a branch whose CI fails; refused once the run has committed)"`
	Branch   string            `sg:"branch" doc:"for commit base: the branch whose tip the base commit is (github reads its required checks); may name an input"`
	Canary   string            `sg:"canary,enum=on|off,default=on" doc:"for command: a go test -json command is sealed and canaried as the test gate's is (see the test type's canary)"`
	TokenEnv string            `sg:"token_env,notemplate,credential,default=GITHUB_TOKEN" doc:"for github: environment variable holding the token, sent only to base_url"`
	// Credentials mints the token per wait instead (credential.Parse).
	Credentials any `sg:"credentials,notemplate" doc:"for github, instead of token_env, a token minted for this wait: {github_app: {app_id_env: VAR holding the app's id, key_file: absolute path of its private key, installation_id: N}}, sent to base_url; it may read checks and statuses of the repository and nothing else (so the branch's required checks, which need administration: read, are not read: name them in checks), and is revoked once the wait ends"`
}

// Validate refuses keys of the other provider, a command provider without
// its command, a repo that is not owner/name and a negative log_lines.
func (c *CIConfig) Validate(n *blueprint.Node) []blueprint.Diagnostic {
	ds := credential.Check(n)
	if _, ok := n.Config[credential.Field]; ok && c.Provider != "github" {
		ds = append(ds, n.ErrorAt(credential.Field, -1, "credentials are for provider github; provider command sends no token"))
	}
	hasRun := c.Run.Line != "" || c.Run.Argv != nil
	switch {
	case c.Provider == "command" && !hasRun:
		ds = append(ds, n.ErrorAt("provider", -1, "provider command needs run: the CI command to run on the pushed commit"))
	case c.Provider == "github" && hasRun:
		ds = append(ds, n.ErrorAt("run", -1, "run is for provider command; provider github reads the checks GitHub reports"))
	}
	if c.Provider == "command" {
		for _, k := range []string{"checks", "repo"} {
			if _, ok := n.Config[k]; ok {
				ds = append(ds, n.ErrorAt(k, -1, "%s is for provider github", k))
			}
		}
	}
	switch {
	case c.Commit == "base" && c.Branch == "":
		ds = append(ds, n.ErrorAt("commit", -1, "commit base needs branch: the branch whose tip the run's base commit is"))
	case c.Commit == "base" && c.Provider == "github" && c.Repo == "":
		ds = append(ds, n.ErrorAt("commit", -1, "commit base with provider github needs repo (owner/name): nothing was pushed to take it from"))
	case c.Commit != "base" && c.Branch != "":
		ds = append(ds, n.ErrorAt("branch", -1, "branch is for commit base; the pushed commit's branch is the one git_push pushed"))
	}
	if c.Repo != "" && !strings.Contains(c.Repo, "${{") && !validRepo(c.Repo) {
		ds = append(ds, n.ErrorAt("repo", -1, "want owner/name, got %q", c.Repo))
	}
	if c.LogLines < 0 {
		ds = append(ds, n.ErrorAt("log_lines", -1, "must not be negative, got %d", c.LogLines))
	}
	return ds
}

// validRepo reports whether s is a GitHub owner/name. It goes into API
// URL paths, so dot segments, which would climb out of /repos/, are refused.
func validRepo(s string) bool {
	owner, name, _ := strings.Cut(s, "/")
	return repoRE.MatchString(s) && owner != "." && owner != ".." && name != "." && name != ".."
}

var repoRE = regexp.MustCompile(`^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$`)
