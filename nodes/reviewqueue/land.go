package reviewqueue

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/sandgate/sandgate/nodes/internal/gitremote"
)

// land puts the approved commit on its target branch on the remote, from
// a scratch repository with the harness's minimal git environment (as
// DeleteBranch does), and returns the target's new tip. A fast-forward
// the target's history no longer allows, or a merge that conflicts, is an
// error and changes nothing. The push is a plain one: if the target moved
// between the fetch and the push, the remote refuses it, so approving
// never drops someone else's commit.
func (q *Queue) land(ctx context.Context, e *Entry, note, by string) (string, error) {
	a := e.OnApprove
	if a.Remote == "" || strings.HasPrefix(a.Remote, "-") || !gitremote.ValidBranch(a.MergeInto) || !objectID(e.Commit) {
		return "", fmt.Errorf("on_approve: nothing to land: remote %q, merge_into %q, commit %q", gitremote.RedactURL(a.Remote), a.MergeInto, e.Commit)
	}
	tok, lease, err := q.pushToken(ctx, e, a.Remote, a.TokenEnv, a.Credentials, "on_approve")
	if err != nil {
		return "", err
	}
	if lease != nil {
		tip, err := q.landWith(ctx, e, note, by, tok)
		return tip, lease.Err(errors.Join(err, lease.Close()))
	}
	return q.landWith(ctx, e, note, by, tok)
}

// landWith is land sending tok to the remote.
func (q *Queue) landWith(ctx context.Context, e *Entry, note, by, tok string) (string, error) {
	a := e.OnApprove
	gitDir, err := os.MkdirTemp("", "sandgate-approve-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(gitDir)
	g := &scratchGit{ctx: ctx, s: gitremote.Spec{GitDir: gitDir, Remote: a.Remote, Token: tok}}
	target := "refs/heads/" + a.MergeInto
	old, err := g.fetchTarget(target, e)
	if err != nil {
		return "", err
	}
	tip := e.Commit
	switch a.Method {
	case "ff":
		if _, err := g.run("merge-base", "--is-ancestor", old, e.Commit); err != nil {
			return "", fmt.Errorf("cannot fast-forward %s on %s to %s: %s is at %s, which the reviewed change (based on %s) does not contain; the branch moved since the run, so approve with on_approve method: merge, or run again on the new %s",
				a.MergeInto, gitremote.RedactURL(a.Remote), gitremote.Short(e.Commit), a.MergeInto, gitremote.Short(old), gitremote.Short(e.Base), a.MergeInto)
		}
	case "merge":
		if tip, err = g.merge(old, e, approvedBy(by, note)); err != nil {
			return "", err
		}
	default:
		return "", fmt.Errorf("on_approve: unknown method %q", a.Method)
	}
	if tip == old {
		return tip, nil // already there
	}
	if out, err := g.run("push", "--porcelain", "--", a.Remote, tip+":"+target); err != nil {
		why := gitremote.RemoteSays(out)
		if _, summary, found := gitremote.PorcelainRef(out, target); found {
			why = strings.TrimSuffix(summary+"; "+why, "; ")
		}
		return "", fmt.Errorf("push %s to %s on %s (it may have moved meanwhile; approve again): %s", gitremote.Short(tip), a.MergeInto, gitremote.RedactURL(a.Remote), g.redact(why))
	}
	return tip, nil
}

// objectID reports whether s is a full hex object id (SHA-1 or SHA-256).
// Git would take any revision where the entry's commit goes, and
// "refs/sandgate/reviewed~0…" names the reviewed branch's tip as fetched
// now, not the commit that was reviewed.
func objectID(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for _, c := range s {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// scratchGit runs git in a throwaway bare repository.
type scratchGit struct {
	ctx context.Context
	s   gitremote.Spec
}

func (g *scratchGit) run(args ...string) (string, error) {
	return gitremote.Git(g.ctx, g.s, append([]string{"--git-dir=" + g.s.GitDir}, args...)...)
}

func (g *scratchGit) redact(s string) string {
	if g.s.Token != "" {
		s = strings.ReplaceAll(s, g.s.Token, "xxxxx")
	}
	return s
}

// fetchTarget fetches the target branch and makes sure every object of
// the reviewed commit is at hand: from the remote's copy of the reviewed
// branch, else from the run's promotion repository. It returns the
// target's tip.
func (g *scratchGit) fetchTarget(target string, e *Entry) (string, error) {
	remote := g.s.Remote
	if out, err := gitremote.Git(g.ctx, g.s, "init", "--bare", "--quiet", g.s.GitDir); err != nil {
		return "", fmt.Errorf("approve: %w: %s", err, out)
	}
	if out, err := g.run("fetch", "--quiet", "--no-tags", "--", remote, "+"+target+":refs/sandgate/target"); err != nil {
		return "", fmt.Errorf("fetch %s from %s: %s", strings.TrimPrefix(target, "refs/heads/"), gitremote.RedactURL(remote), g.redact(strings.TrimSpace(out)))
	}
	old, err := g.run("rev-parse", "--verify", "refs/sandgate/target^{commit}")
	if err != nil {
		return "", fmt.Errorf("read the fetched %s: %s", target, old)
	}
	// The reviewed branch as pushed; if someone moved it since, only the
	// reviewed commit in its history is used, never the new tip.
	_, _ = g.run("fetch", "--quiet", "--no-tags", "--", remote, "+refs/heads/"+e.Branch+":refs/sandgate/reviewed")
	if _, err := g.run("rev-list", "--quiet", "--objects", e.Commit, "--not", "refs/sandgate/target"); err != nil {
		promote := filepath.Join(e.RunDir, "promote.git", "objects")
		if fi, serr := os.Stat(promote); serr != nil || !fi.IsDir() {
			return "", fmt.Errorf("the reviewed commit %s is neither on %s (branch %s) nor in the run's repository %s", gitremote.Short(e.Commit), gitremote.RedactURL(remote), e.Branch, promote)
		}
		alt := filepath.Join(g.s.GitDir, "objects", "info", "alternates")
		if err := os.WriteFile(alt, []byte(promote+"\n"), 0o644); err != nil {
			return "", err
		}
		if out, err := g.run("rev-list", "--quiet", "--objects", e.Commit, "--not", "refs/sandgate/target"); err != nil {
			return "", fmt.Errorf("the reviewed commit %s is incomplete in the run's repository %s (was its snapshot pruned?): %s", gitremote.Short(e.Commit), promote, out)
		}
	}
	return strings.TrimSpace(old), nil
}

// merge writes a merge commit of the reviewed commit into old, refusing a
// conflict.
func (g *scratchGit) merge(old string, e *Entry, trailer string) (string, error) {
	out, err := g.run("merge-tree", "--write-tree", "--name-only", "--no-messages", old, e.Commit)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var ee interface{ ExitCode() int }
	if errors.As(err, &ee) && ee.ExitCode() == 1 && len(lines) > 1 {
		return "", fmt.Errorf("merging %s into %s conflicts in %s; nothing was pushed", gitremote.Short(e.Commit), e.OnApprove.MergeInto, strings.Join(lines[1:], ", "))
	}
	if err != nil {
		return "", fmt.Errorf("merge %s into %s: %w: %s", gitremote.Short(e.Commit), e.OnApprove.MergeInto, err, out)
	}
	msg := fmt.Sprintf("Merge branch '%s' into %s\n\n%s\n\n%s", e.Branch, e.OnApprove.MergeInto, e.Title, trailer)
	cmd := []string{"-c", "user.name=sandgate", "-c", "user.email=sandgate@localhost", "commit-tree", lines[0], "-p", old, "-p", e.Commit, "-m", msg}
	tip, err := g.run(cmd...)
	if err != nil {
		return "", fmt.Errorf("write the merge commit: %w: %s", err, tip)
	}
	return strings.TrimSpace(tip), nil
}
