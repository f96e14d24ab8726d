package nodes

import (
	"net/mail"
	"path"
	"regexp"
	"strings"
	"time"

	"github.com/sandgate/sandgate/blueprint"
	"github.com/sandgate/sandgate/nodes/internal/command"
	"github.com/sandgate/sandgate/nodes/internal/gate"
	"github.com/sandgate/sandgate/nodes/internal/gitstore"
	"github.com/sandgate/sandgate/sandbox"
)

// The configuration of each built-in node type, declared once: the tags
// drive validation, the JSON Schema and docs (blueprint.Configured), and
// factories receive the decoded, defaulted struct (blueprint.Decode). The
// Validate methods run when a blueprint loads (sandgate validate, and run
// before anything runs) and again in guard before a factory builds the
// node, so a configuration is refused at its field, with a caret, and never
// accepted by validation only to be refused by the factory.

// ShellConfig configures shell nodes.
type ShellConfig struct {
	Run blueprint.Command `sg:"run,required,notemplate" doc:"command line run by sh -c in the workspace (no templates), or {argv: [program, arg...]} run without a shell, whose items may name patterned inputs"`
}

// LintConfig configures lint nodes.
type LintConfig struct {
	Run []blueprint.Command `sg:"run,required,notemplate" doc:"one or more linter commands, each a shell command line (no templates) or {argv: [program, arg...]}"`
}

// TestConfig configures test nodes.
type TestConfig struct {
	Run                blueprint.Command `sg:"run,required,notemplate" doc:"test command: a shell command line (no templates) or {argv: [program, arg...]} run without a shell, whose items may name patterned inputs"`
	Format             string            `sg:"format,enum=auto|go-json|junit|tap,default=auto" doc:"report format"`
	Report             string            `sg:"report,notemplate" doc:"JUnit XML file the command writes under /tmp (a gate may not write in the workspace); removed before each run, so the command must write it anew"`
	RerunFailed        int               `sg:"rerun_failed" doc:"re-run failures up to N times to tell flaky from broken"`
	Hidden             string            `sg:"hidden,notemplate" doc:"directory of held-out tests, run in a throwaway box built from the change; never placed in the run's workspace"`
	HiddenFeedback     string            `sg:"hidden_feedback,enum=count|names,default=count" doc:"what the agent learns when held-out tests fail: count or names"`
	AllowNoTests       []string          `sg:"allow_no_tests,notemplate" doc:"Go packages (import paths, or a prefix ending in /...) allowed to have test files yet run no test; any other such package fails the gate"`
	AllowTestDetection bool              `sg:"allow_test_detection" doc:"let the change's non-test Go files detect the test binary (testing.Testing or testing.Init, test.* flag names, a .test binary name, writes to os.Args); by default such code fails the gate, as it could behave differently under test"`
	Canary             string            `sg:"canary,enum=on|off,default=on" doc:"compile an always-failing test with a random name into every tested package (go test -overlay; the workspace is untouched): a report in which it does not fail was forged by the test binary. off for packages whose TestMain fails the package after passing tests (goleak.VerifyTestMain): with the canary failing, such post-checks do not run"`
}

// Validate refuses rerun_failed where the harness cannot re-run single
// tests (it re-runs failures with go test's -run), an unreadable hidden
// directory, and a report the gate would write in the workspace.
func (c *TestConfig) Validate(n *blueprint.Node) []blueprint.Diagnostic {
	if c.RerunFailed > 0 && c.Format != "go-json" && !command.Of(c.Run).IsGoTest() {
		return []blueprint.Diagnostic{n.ErrorAt("rerun_failed", -1, "rerun_failed needs go test -json (format: go-json): failures are re-run with go test -run")}
	}
	if c.Hidden != "" {
		if _, err := gate.HiddenFiles(c.Hidden); err != nil {
			return []blueprint.Diagnostic{n.ErrorAt("hidden", -1, "%v", err)}
		}
	}
	if c.Report == "" {
		return nil
	}
	if c.RerunFailed > 0 {
		return []blueprint.Diagnostic{n.ErrorAt("rerun_failed", -1, "rerun_failed reads go test -json output and cannot be combined with report: %s", c.Report)}
	}
	if _, ok := reportPath(c.Report); !ok {
		return []blueprint.Diagnostic{n.ErrorAt("report", -1, "%q must be a file under %s/: a gate may not write in the workspace it judges", c.Report, sandbox.TmpDir)}
	}
	return nil
}

// reportPath is a report's cleaned path, and whether it is a file in the
// box's scratch directory.
func reportPath(report string) (string, bool) {
	r := path.Clean(report)
	return r, strings.HasPrefix(r, sandbox.TmpDir+"/")
}

// DiffCapConfig configures diff_cap nodes. The caps are pointers so a cap
// written as zero is told from one left out.
type DiffCapConfig struct {
	MaxLines *int     `sg:"max_lines" doc:"lines added plus deleted"`
	MaxFiles *int     `sg:"max_files" doc:"files changed, binary files included"`
	MaxBytes *int     `sg:"max_bytes" doc:"bytes of added or modified files (apparent size) plus deleted files' size"`
	Exclude  []string `sg:"exclude,notemplate" doc:"globs not counted (lock files, generated code)"`
}

// Validate refuses a diff_cap without a positive cap: it would pass any
// change.
func (c *DiffCapConfig) Validate(n *blueprint.Node) []blueprint.Diagnostic {
	caps := []struct {
		key string
		v   *int
	}{{"max_lines", c.MaxLines}, {"max_files", c.MaxFiles}, {"max_bytes", c.MaxBytes}}
	for _, f := range caps {
		if f.v != nil && *f.v > 0 {
			return nil
		}
	}
	for _, f := range caps {
		if f.v != nil {
			return []blueprint.Diagnostic{n.ErrorAt(f.key, -1, "diff_cap needs a positive max_lines, max_files or max_bytes: a zero cap checks nothing")}
		}
	}
	return []blueprint.Diagnostic{n.ErrorAt("", -1, "diff_cap needs max_lines, max_files or max_bytes: without a cap it passes any change")}
}

// ProtectConfig configures protect nodes.
type ProtectConfig struct {
	Paths  []string `sg:"paths,required,notemplate" doc:"globs the agent must not change"`
	Action string   `sg:"action,enum=fail|revert,default=fail" doc:"fail or revert the changes"`
}

// ParityConfig configures parity nodes.
type ParityConfig struct {
	Tools map[string]string `sg:"tools,notemplate" doc:"tool name to required version prefix, beside go.mod and .tool-versions"`
}

// ApplyPatchConfig configures apply_patch nodes.
type ApplyPatchConfig struct {
	Patch   string `sg:"patch,required" doc:"the diff, usually a template over inputs or outputs"`
	Preview bool   `sg:"preview" doc:"write the diff for review instead of applying it"`
}

// GitCommitConfig configures git_commit nodes.
type GitCommitConfig struct {
	Message string `sg:"message" doc:"commit message"`
	Branch  string `sg:"branch" doc:"branch name (default sandgate/<run-id>)"`
	Author  string `sg:"author,default=sandgate <sandgate@localhost>" doc:"Name <email>"`
}

// Validate refuses an author that is not "Name <email>" and a branch name
// git would refuse, before any agent work is spent.
func (c *GitCommitConfig) Validate(n *blueprint.Node) []blueprint.Diagnostic {
	var ds []blueprint.Diagnostic
	if _, err := mail.ParseAddress(c.Author); err != nil {
		ds = append(ds, n.ErrorAt("author", -1, "want \"Name <email>\", got %q: %v", c.Author, err))
	}
	// A templated branch is checked once rendered, when the node runs.
	if b := c.Branch; b != "" && !strings.Contains(b, "${{") && !gitstore.ValidBranch(b) {
		ds = append(ds, n.ErrorAt("branch", -1, "invalid branch name %q", b))
	}
	return ds
}

// GitPushConfig configures git_push nodes.
type GitPushConfig struct {
	Remote         string `sg:"remote,required,endpoint,keyoptional,trusted=https://github.com" doc:"remote URL or path (used by the harness's git client, never a shell); with token_env, an https://github.com URL or one under a prefix the operator allows (--allow-endpoint)"`
	TokenEnv       string `sg:"token_env,notemplate,credential" doc:"environment variable holding an HTTP token, sent only to the remote's host and only for an http(s) remote on https://github.com or under an --allow-endpoint prefix"`
	DeleteOnReject bool   `sg:"delete_on_reject" doc:"when the change is rejected in the local review queue (sandgate review reject), delete the pushed branch on the remote, only if it still points at the pushed commit"`
}

// ReviewConfig configures review nodes. Dir has no static default: it is
// the registry's Options.ReviewDir, else .sandgate/reviews.
type ReviewConfig struct {
	Queue    string `sg:"queue,enum=local|github,default=local" doc:"local or github"`
	Title    string `sg:"title" doc:"review title"`
	Repo     string `sg:"repo,notemplate" doc:"owner/name, for github"`
	Base     string `sg:"base,notemplate,default=main" doc:"base branch, for github"`
	BaseURL  string `sg:"base_url,notemplate,endpoint,trusted=https://api.github.com,default=https://api.github.com" doc:"API base URL, for GitHub Enterprise; any other needs the operator's --allow-endpoint"`
	TokenEnv string `sg:"token_env,notemplate,credential,default=GITHUB_TOKEN" doc:"environment variable holding the token"`
	Dir      string `sg:"dir,notemplate" doc:"local queue directory (default .sandgate/reviews)"`
	// OnApprove is what sandgate review approve does; the node records it
	// in the queue entry, so approving needs no blueprint.
	OnApprove map[string]string `sg:"on_approve,notemplate" doc:"what sandgate review approve does. Queue local: {merge_into: BRANCH, method: ff (default) or merge, remote: URL or path, by default the remote a git_push node pushed to}. Queue github: {github: ready, approve or merge; merge_method: merge, squash or rebase} (with ready the pull request opens as a draft)"`
	// Wait makes the node wait for the reviewers' decision; zero hands
	// the change over and passes at once.
	Wait time.Duration `sg:"wait" doc:"wait this long for a decision: approved passes; changes requested (sandgate review reject --note, or a GitHub review requesting changes on the reviewed commit) fails with the reviewers' comments as feedback, for an on_fail edge back to the agent; no decision in time fails with decision timed_out. The wait survives a restart (its start is recorded in the run)"`
}

// Validate refuses a negative wait, a GitHub review without the repository
// to open the pull request in, and an on_approve the queue cannot carry
// out.
func (c *ReviewConfig) Validate(n *blueprint.Node) []blueprint.Diagnostic {
	if c.Wait < 0 {
		return []blueprint.Diagnostic{n.ErrorAt("wait", -1, "want a positive duration such as 24h, got %s", c.Wait)}
	}
	if _, err := parseOnApprove(c.Queue, c.OnApprove); err != nil {
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
	TokenEnv string            `sg:"token_env,notemplate,credential,default=GITHUB_TOKEN" doc:"for github: environment variable holding the token, sent only to base_url"`
}

// Validate refuses keys of the other provider, a command provider without
// its command, a repo that is not owner/name and a negative log_lines.
func (c *CIConfig) Validate(n *blueprint.Node) []blueprint.Diagnostic {
	var ds []blueprint.Diagnostic
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

// deref is *p, or zero for nil.
func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}
