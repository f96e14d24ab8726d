package gitremote

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/sandgate/sandgate/blueprint"
	"github.com/sandgate/sandgate/internal/ghapp"
)

// PushedBranch is a branch git_push made on a remote: the run's latest
// push is kept in push.json, and those made with delete_on_reject are
// recorded in the review entry.
type PushedBranch struct {
	Remote string `json:"remote"`
	Ref    string `json:"ref"`
	Commit string `json:"commit"`
	// TokenEnv names the variable holding the push token; the token
	// itself is never written down.
	TokenEnv string `json:"token_env,omitempty"`
	// Credentials is the git_push node's github_app when it minted the
	// push token (no secret): landing or deleting the branch later mints
	// one of its own.
	Credentials *ghapp.Config `json:"credentials,omitempty"`
}

// DeleteBranch deletes a pushed branch on its remote, from the harness
// with the same minimal git environment as the push. It uses a lease on
// the pushed commit: a branch someone moved since is left alone, and
// that is an error the caller reports. The token named by b.TokenEnv goes
// only to a remote under the trusted prefix or allowed (the record is a
// file someone could edit to point the token at a server of their own);
// b.Credentials is not minted here (the review queue does that).
func DeleteBranch(ctx context.Context, b PushedBranch, allowed []string) error {
	var tok string
	if b.TokenEnv != "" {
		if err := CheckRemote(b.Remote, allowed); err != nil {
			return fmt.Errorf("delete %s (token_env %s): %w", b.Ref, b.TokenEnv, err)
		}
		if tok = os.Getenv(b.TokenEnv); tok == "" {
			return fmt.Errorf("delete %s on %s: %s is not set in this environment", b.Ref, RedactURL(b.Remote), b.TokenEnv)
		}
	}
	return DeleteBranchWith(ctx, b, tok)
}

// DeleteBranchWith is DeleteBranch sending tok (which may be empty) to
// the remote's host, whatever b names.
func DeleteBranchWith(ctx context.Context, b PushedBranch, tok string) error {
	if b.Remote == "" || strings.HasPrefix(b.Remote, "-") || !strings.HasPrefix(b.Ref, "refs/heads/") || len(b.Commit) < 40 {
		return fmt.Errorf("delete %s on %s: not a pushed branch record", b.Ref, RedactURL(b.Remote))
	}
	// git push needs a repository; a deletion sends no objects, so an
	// empty one will do.
	gitDir, err := os.MkdirTemp("", "sandgate-reject-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(gitDir)
	s := Spec{GitDir: gitDir, Remote: b.Remote, Ref: b.Ref, Token: tok}
	if out, err := Git(ctx, s, "init", "--bare", "--quiet", gitDir); err != nil {
		return fmt.Errorf("delete %s: %w: %s", b.Ref, err, out)
	}
	out, err := Git(ctx, s, "--git-dir="+gitDir, "push", "--porcelain", "--force-with-lease="+b.Ref+":"+b.Commit, "--", b.Remote, ":"+b.Ref)
	if err != nil {
		why := RemoteSays(out)
		if _, summary, found := PorcelainRef(out, b.Ref); found {
			why = strings.TrimSuffix(summary+"; "+why, "; ") // e.g. "[rejected] (stale info)": the branch moved
		}
		if tok != "" {
			why = strings.ReplaceAll(why, tok, "xxxxx")
		}
		return fmt.Errorf("delete %s on %s: %w: %s", b.Ref, RedactURL(b.Remote), err, why)
	}
	return nil
}

// Git runs git with the push environment of s and returns its output.
func Git(ctx context.Context, s Spec, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Env = pushEnv(s)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// RedactURL hides a password written into a remote URL.
func RedactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.User == nil {
		return s
	}
	if _, ok := u.User.Password(); ok {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	}
	return u.String()
}

// TrustedRemote is where a git_push token may always go; the git_push
// node's remote field declares it as its trusted prefix (nodes tests
// that the declarations agree).
const TrustedRemote = "https://github.com"

// CheckRemote refuses to send a push token to remote unless it is under
// TrustedRemote or a prefix the operator allowed (--allow-endpoint).
func CheckRemote(remote string, allowed []string) error {
	return blueprint.CheckEndpoint(blueprint.Field{Endpoint: true, Trusted: []string{TrustedRemote}}, remote, allowed)
}

// ValidBranch reports whether git would accept name as a branch.
func ValidBranch(name string) bool {
	return plumbing.NewBranchReferenceName(name).IsBranch() && !strings.ContainsAny(name, " ~^:?*[\\") && !strings.Contains(name, "..")
}

// Short is a commit hash's first 12 characters.
func Short(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}
