package promote

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/sandgate/sandgate/blueprint"
	"github.com/sandgate/sandgate/nodes/internal/alert"
	"github.com/sandgate/sandgate/nodes/internal/credential"
	"github.com/sandgate/sandgate/nodes/internal/gitremote"
	"github.com/sandgate/sandgate/runtime"
)

// GitPush pushes the Committed branch from the harness, with credentials
// that never enter the sandbox. Pushing the same commit again is a no-op.
//
// It runs the git CLI rather than go-git: go-git's push from the promotion
// repository (whose objects live behind alternates) to an empty or
// unrelated remote hung waiting on git-receive-pack and ignored the
// context, so a node timeout could not stop it.
type GitPush struct {
	tokenEnv string
	// app mints a token per push instead (credentials: github_app).
	app *credential.AppConfig
	// allowed are the operator's URL prefixes for tokens (--allow-endpoint).
	allowed []string
	// deleteOnReject: the review entry remembers the pushed branch, so
	// `sandgate review reject` deletes it.
	deleteOnReject bool
	// routed: the blueprint names where a failed push goes (on_fail or
	// edges), so a refusal is an outcome. Behind a plain next edge it is
	// an error instead, so the run cannot carry on as if the push landed.
	routed bool
}

var _ runtime.Node = (*GitPush)(nil)

func newGitPush(spec *blueprint.Node, allowed []string) (runtime.Node, error) {
	c, err := blueprint.Decode[GitPushConfig](spec)
	if err != nil {
		return nil, err
	}
	app, _ := credential.Parse(spec)
	p := &GitPush{allowed: allowed, tokenEnv: c.TokenEnv, app: app, deleteOnReject: c.DeleteOnReject}
	for _, e := range spec.Edges {
		p.routed = p.routed || e.Kind == blueprint.EdgeOnFail || e.Kind == blueprint.EdgeWhen
	}
	return p, nil
}

// Run implements runtime.Node.
func (g *GitPush) Run(ctx context.Context, in *runtime.Input) (*runtime.Result, error) {
	pr, refused, err := Start(in, true)
	if pr == nil {
		return refused, err
	}
	c, p := pr.Commit, pr.Repo
	remoteURL, err := in.Render("remote")
	if err != nil {
		return nil, err
	}
	if remoteURL == "" || strings.HasPrefix(remoteURL, "-") {
		return nil, fmt.Errorf("remote %q: want a URL or a path", remoteURL)
	}
	tok, lease, err := g.token(ctx, in, remoteURL)
	if err != nil {
		return nil, err
	}
	if lease != nil {
		defer lease.Done(in)
	}
	ref := "refs/heads/" + c.Branch
	pushRepoAlert(in, remoteURL, c.Branch)
	pushed, err := gitremote.Push(ctx, gitremote.Spec{GitDir: p.Dir(), Remote: remoteURL, Commit: c.Commit, Ref: ref, Token: tok})
	if err != nil {
		msg := fmt.Sprintf("push %s to %s: %v", c.Branch, gitremote.RedactURL(remoteURL), lease.Err(err))
		if ctx.Err() != nil {
			// The runtime names a node timeout itself; this covers a
			// canceled run.
			return nil, fmt.Errorf("%s (%w)", msg, ctx.Err())
		}
		if g.routed {
			return &runtime.Result{Outcome: runtime.OutcomeFail, Reason: msg, Feedback: msg}, nil
		}
		return nil, fmt.Errorf("%s", msg)
	}
	rec := gitremote.PushedBranch{Remote: remoteURL, Ref: ref, Commit: c.Commit, TokenEnv: g.tokenEnv, Credentials: g.app}
	// A ci node judges exactly this commit, also after a crash.
	pushes, err := PushesOf(in)
	if err != nil {
		return nil, err
	}
	if err := pushes.record(rec); err != nil {
		return nil, fmt.Errorf("record the push: %w", err)
	}
	pushes.note(rec, g.deleteOnReject)
	return &runtime.Result{Outcome: runtime.OutcomePass, Outputs: map[string]any{"ref": ref, "pushed": pushed, "remote": gitremote.RedactURL(remoteURL)}}, nil
}

// token is the push's token: none, the operator's (token_env), or one
// minted for the remote's repository (credentials), whose lease the
// caller closes.
func (g *GitPush) token(ctx context.Context, in *runtime.Input, remoteURL string) (string, *credential.Lease, error) {
	if g.tokenEnv == "" && g.app == nil {
		return "", nil, nil
	}
	// The loader checked a literal remote; this checks the rendered
	// one, before git starts or a token is minted.
	if err := gitremote.CheckRemote(remoteURL, g.allowed); err != nil {
		if g.app != nil {
			return "", nil, fmt.Errorf("remote (credentials): %w", err)
		}
		return "", nil, fmt.Errorf("remote (token_env %s): %w", g.tokenEnv, err)
	}
	if g.app == nil {
		tok := os.Getenv(g.tokenEnv)
		if tok == "" {
			return "", nil, fmt.Errorf("token_env %s is not set in the harness environment", g.tokenEnv)
		}
		return tok, nil, nil
	}
	repo := gitremote.RepoOf(remoteURL)
	if repo == "" {
		return "", nil, fmt.Errorf("credentials: cannot tell owner/name from the remote %s", gitremote.RedactURL(remoteURL))
	}
	lease, err := credential.NewLease(ctx, in, g.app.WithBase(gitremote.APIBaseOf(remoteURL)), g.allowed, credential.Push, repo)
	if err != nil {
		return "", nil, err
	}
	tok, err := lease.Token()
	if err != nil {
		lease.Done(in)
		return "", nil, err
	}
	return tok, lease, nil
}

// pushRepoAlert pages the operator's alert sinks when the push goes to a
// repository other than the run's own (a remote of the user's repository).
func pushRepoAlert(in *runtime.Input, remoteURL, branch string) {
	repo := gitremote.RepoOf(remoteURL)
	if repo == "" && filepath.IsAbs(remoteURL) {
		repo = remoteURL
	}
	alert.Elsewhere(in, alert.KindForeignPush, repo,
		fmt.Sprintf("git_push is pushing %s to %s, a repository other than the run's", branch, gitremote.RedactURL(remoteURL)))
}
