package reviewqueue

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/sandgate/sandgate/nodes/internal/credential"
	"github.com/sandgate/sandgate/nodes/internal/gitremote"
)

// pushToken is the token that landing on, or deleting a branch of, remote
// sends: the operator's (tokenEnv), one minted for the remote's one
// repository with contents: write (app, when the run's push minted its
// own), or none. A returned lease is the caller's to Close: it revokes
// the minted token, and what it cannot revoke stays in the entry's
// ledger for the next action on the entry or its removal.
func (q *Queue) pushToken(ctx context.Context, e *Entry, remote, tokenEnv string, app *credential.AppConfig, what string) (string, *credential.Lease, error) {
	if tokenEnv == "" && app == nil {
		return "", nil, nil
	}
	// Checked again here: the entry is a file anyone with the queue
	// directory could edit.
	if err := gitremote.CheckRemote(remote, q.AllowEndpoints); err != nil {
		if app != nil {
			return "", nil, fmt.Errorf("%s remote (credentials): %w", what, err)
		}
		return "", nil, fmt.Errorf("%s remote (token_env %s): %w", what, tokenEnv, err)
	}
	if app == nil {
		tok := os.Getenv(tokenEnv)
		if tok == "" {
			return "", nil, fmt.Errorf("%s: %s (the push token) is not set in this environment", what, tokenEnv)
		}
		return tok, nil, nil
	}
	repo := gitremote.RepoOf(remote)
	if repo == "" {
		return "", nil, fmt.Errorf("%s: credentials: cannot tell owner/name from the remote %s", what, gitremote.RedactURL(remote))
	}
	lease, err := credential.Borrow(ctx, app.WithBase(gitremote.APIBaseOf(remote)), q.AllowEndpoints, credential.Push, repo, filepath.Join(q.Dir, e.ID), what, nil)
	if err != nil {
		return "", nil, fmt.Errorf("%s: %w", what, err)
	}
	tok, err := lease.Token()
	if err != nil {
		return "", nil, fmt.Errorf("%s: %w", what, lease.Err(errors.Join(err, lease.Close())))
	}
	return tok, lease, nil
}

// deleteBranch deletes a branch the run pushed, sending the token its
// push used (token_env) or one minted for it (when the push minted its
// own), and that only to a remote under the trusted prefix or one the
// operator allowed: the entry is a file anyone with the queue directory
// could edit, and its remote names where the token goes.
func (q *Queue) deleteBranch(ctx context.Context, e *Entry, br PushedBranch) error {
	tok, lease, err := q.pushToken(ctx, e, br.Remote, br.TokenEnv, br.Credentials, "delete "+br.Ref)
	if err != nil {
		return err
	}
	err = gitremote.DeleteBranchWith(ctx, br, tok)
	if lease != nil {
		return lease.Err(errors.Join(err, lease.Close()))
	}
	return err
}
