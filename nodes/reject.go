package nodes

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/sandgate/sandgate/nodes/internal/atomicfile"
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
}

// notedPush is one push the run made, and whether rejecting the change
// deletes it.
type notedPush struct {
	PushedBranch
	deleteOnReject bool
}

// recordPush writes the run's latest push to push.json, beside
// commit.json, so it survives a crash: ci nodes read it to know which
// commit CI must judge.
func (w *Workspace) recordPush(p PushedBranch) error {
	b, err := json.Marshal(p)
	if err != nil {
		return err
	}
	return atomicfile.Write(filepath.Join(w.RunDir, "push.json"), b)
}

// lastPush is the run's latest push, from push.json.
func (w *Workspace) lastPush() (*PushedBranch, error) {
	b, err := os.ReadFile(filepath.Join(w.RunDir, "push.json"))
	if err != nil {
		return nil, errors.New("nothing was pushed yet: run a git_push node first")
	}
	var p PushedBranch
	if err := json.Unmarshal(b, &p); err != nil {
		return nil, fmt.Errorf("push.json: %w", err)
	}
	return &p, nil
}

func (w *Workspace) notePush(p PushedBranch, deleteOnReject bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.pushed = append(w.pushed, notedPush{p, deleteOnReject})
}

// pushes are the branches to delete when the change is rejected.
func (w *Workspace) pushes() []PushedBranch {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []PushedBranch
	for _, p := range w.pushed {
		if p.deleteOnReject {
			out = append(out, p.PushedBranch)
		}
	}
	return out
}

// DeleteBranch deletes a pushed branch on its remote, from the harness
// with the same minimal git environment as the push. It uses a lease on
// the pushed commit: a branch someone moved since is left alone, and
// that is an error the caller reports.
func DeleteBranch(ctx context.Context, b PushedBranch) error {
	if b.Remote == "" || strings.HasPrefix(b.Remote, "-") || !strings.HasPrefix(b.Ref, "refs/heads/") || len(b.Commit) < 40 {
		return fmt.Errorf("delete %s on %s: not a pushed branch record", b.Ref, redactURL(b.Remote))
	}
	var tok string
	if b.TokenEnv != "" {
		if tok = os.Getenv(b.TokenEnv); tok == "" {
			return fmt.Errorf("delete %s on %s: %s is not set in this environment", b.Ref, redactURL(b.Remote), b.TokenEnv)
		}
	}
	// git push needs a repository; a deletion sends no objects, so an
	// empty one will do.
	gitDir, err := os.MkdirTemp("", "sandgate-reject-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(gitDir)
	s := pushSpec{gitDir: gitDir, remote: b.Remote, ref: b.Ref, token: tok}
	if out, err := runGit(ctx, s, "init", "--bare", "--quiet", gitDir); err != nil {
		return fmt.Errorf("delete %s: %w: %s", b.Ref, err, out)
	}
	out, err := runGit(ctx, s, "--git-dir="+gitDir, "push", "--porcelain", "--force-with-lease="+b.Ref+":"+b.Commit, "--", b.Remote, ":"+b.Ref)
	if err != nil {
		why := remoteSays(out)
		if _, summary, found := porcelainRef(out, b.Ref); found {
			why = strings.TrimSuffix(summary+"; "+why, "; ") // e.g. "[rejected] (stale info)": the branch moved
		}
		if tok != "" {
			why = strings.ReplaceAll(why, tok, "xxxxx")
		}
		return fmt.Errorf("delete %s on %s: %w: %s", b.Ref, redactURL(b.Remote), err, why)
	}
	return nil
}

// runGit runs git with the push environment of s and returns its output.
func runGit(ctx context.Context, s pushSpec, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Env = pushEnv(s)
	out, err := cmd.CombinedOutput()
	return string(out), err
}
