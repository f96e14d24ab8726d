package nodes

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing/transport"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"

	"github.com/sandgate/sandgate/blueprint"
	"github.com/sandgate/sandgate/runtime"
)

// GitPush pushes the committed branch from the harness, with credentials
// that never enter the sandbox. Pushing the same commit again is a no-op.
type GitPush struct {
	tokenEnv string
}

var _ runtime.Node = (*GitPush)(nil)

func newGitPush(spec *blueprint.Node) (runtime.Node, error) {
	p := &GitPush{}
	p.tokenEnv, _ = spec.Config["token_env"].(string)
	return p, nil
}

// Run implements runtime.Node.
func (g *GitPush) Run(ctx context.Context, in *runtime.Input) (*runtime.Result, error) {
	w, err := workspaceOf(in)
	if err != nil {
		return nil, err
	}
	c, p, err := w.verifiedCommit()
	if err != nil {
		return refuse(err), nil
	}
	remoteURL, err := in.Render("remote")
	if err != nil {
		return nil, err
	}
	var auth transport.AuthMethod
	if g.tokenEnv != "" {
		tok := os.Getenv(g.tokenEnv)
		if tok == "" {
			return nil, fmt.Errorf("token_env %s is not set in the harness environment", g.tokenEnv)
		}
		auth = &githttp.BasicAuth{Username: "x-access-token", Password: tok}
	}
	remote := git.NewRemote(p.repo.Storer, &config.RemoteConfig{Name: "sandgate-target", URLs: []string{remoteURL}})
	ref := "refs/heads/" + c.Branch
	err = remote.PushContext(ctx, &git.PushOptions{RemoteName: "sandgate-target", Auth: auth,
		RefSpecs: []config.RefSpec{config.RefSpec(ref + ":" + ref)}})
	pushed := true
	switch {
	case errors.Is(err, git.NoErrAlreadyUpToDate):
		pushed = false
	case err != nil:
		return nil, fmt.Errorf("push %s to %s: %w", c.Branch, remoteURL, err)
	}
	return &runtime.Result{Outcome: runtime.OutcomePass, Outputs: map[string]any{"ref": ref, "pushed": pushed}}, nil
}
