package promote

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/sandgate/sandgate/blueprint"
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
	p := &GitPush{allowed: allowed, tokenEnv: c.TokenEnv, deleteOnReject: c.DeleteOnReject}
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
	var tok string
	if g.tokenEnv != "" {
		// The loader checked a literal remote; this checks the rendered
		// one, before git starts.
		if err := gitremote.CheckRemote(remoteURL, g.allowed); err != nil {
			return nil, fmt.Errorf("remote (token_env %s): %w", g.tokenEnv, err)
		}
		if tok = os.Getenv(g.tokenEnv); tok == "" {
			return nil, fmt.Errorf("token_env %s is not set in the harness environment", g.tokenEnv)
		}
	}
	ref := "refs/heads/" + c.Branch
	pushed, err := gitremote.Push(ctx, gitremote.Spec{GitDir: p.Dir(), Remote: remoteURL, Commit: c.Commit, Ref: ref, Token: tok})
	if err != nil {
		msg := fmt.Sprintf("push %s to %s: %v", c.Branch, gitremote.RedactURL(remoteURL), err)
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
	rec := gitremote.PushedBranch{Remote: remoteURL, Ref: ref, Commit: c.Commit, TokenEnv: g.tokenEnv}
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
