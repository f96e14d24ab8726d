package ci

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/sandgate/sandgate/blueprint"
	"github.com/sandgate/sandgate/nodes/internal/command"
	"github.com/sandgate/sandgate/nodes/internal/credential"
	"github.com/sandgate/sandgate/nodes/internal/feedback"
	"github.com/sandgate/sandgate/nodes/internal/gitremote"
	"github.com/sandgate/sandgate/nodes/internal/promote"
	"github.com/sandgate/sandgate/nodes/workspace"
	"github.com/sandgate/sandgate/runtime"
)

// CI waits for continuous integration to judge the commit the run pushed
// and turns its answer into a verdict the agent can act on: the failing
// checks by name, each with a bounded tail of its log, never whole logs.
//
// It judges exactly the commit in push.json (written by git_push), and
// only when that is the run's latest commit and the workspace still holds
// it: CI results for an older commit never stand in for the current
// change. With commit: base it judges the commit the run started from
// instead (a run started to fix a branch's CI), and only until the run
// commits. Everything it needs is on disk in the run directory, so after a
// crash the node runs again from the top and waits for the same commit.
type CI struct {
	cfg CIConfig
	run command.Command
	// allowed are the operator's URL prefixes for tokens (--allow-endpoint).
	allowed []string
	// clock is time for the GitHub poller; tests replace it.
	clock ciClock
	// app mints the token per wait instead of TokenEnv (credentials:
	// github_app).
	app *credential.AppConfig
}

var _ runtime.Node = (*CI)(nil)

const (
	// ciDefaultTimeout bounds the wait of a ci node without a timeout key.
	ciDefaultTimeout = 30 * time.Minute
	// ciFeedbackBytes bounds the feedback's log tails: CI logs run to
	// megabytes, and the agent's context is not the place for them.
	ciFeedbackBytes = 8 << 10
)

// CI states, the node's state output.
const (
	ciSuccess   = "success"
	ciFailure   = "failure"
	ciCancelled = "cancelled"
	ciTimedOut  = "timed_out"
)

func newCI(spec *blueprint.Node, allowed []string) (runtime.Node, error) {
	c, err := blueprint.Decode[CIConfig](spec)
	if err != nil {
		return nil, err
	}
	app, _ := credential.Parse(spec)
	return &CI{cfg: c, run: command.Of(c.Run), allowed: allowed, clock: realClock{}, app: app}, nil
}

// Type declares ci nodes, whose token goes only to GitHub or an allowed
// API base.
func Type(allowed []string) runtime.Type {
	return runtime.Type{Spec: blueprint.Configured[CIConfig](blueprint.NodeType{Name: "ci", Stage: "promote", Doc: "waits for CI on the commit the run pushed (within the node's timeout, default 30m) and fails with the failing checks and their log tails",
		Outputs: map[string]blueprint.Kind{"state": blueprint.KindString, "failed": blueprint.KindStringList, "url": blueprint.KindString, "commit": blueprint.KindString}}),
		New: func(spec *blueprint.Node) (runtime.Node, error) { return newCI(spec, allowed) }}
}

// ciVerdict is what a provider found.
type ciVerdict struct {
	State  string
	Failed []string
	URL    string
	// Body is the feedback after the one-line summary: failing checks
	// and their log tails, within ciFeedbackBytes.
	Body string
}

// Run implements runtime.Node.
func (c *CI) Run(ctx context.Context, in *runtime.Input) (*runtime.Result, error) {
	w, err := workspace.Of(in)
	if err != nil {
		return nil, err
	}
	push, err := c.target(ctx, in, w)
	if err != nil {
		if ctx.Err() != nil {
			return nil, err
		}
		return promote.Refuse(fmt.Errorf("ci: %w", err)), nil
	}
	// The attempt directory names the commit waited for, for people
	// reading the run; the node itself finds it again in push.json.
	rec, _ := json.Marshal(map[string]string{"commit": push.Commit, "ref": push.Ref, "provider": c.cfg.Provider})
	if err := in.WriteFile("ci.json", rec); err != nil {
		return nil, err
	}
	in.Logger.Info("waiting for CI", "commit", push.Commit, "ref", push.Ref, "provider", c.cfg.Provider)
	budget := ciBudget(in.Spec.Timeout)
	var v *ciVerdict
	if c.cfg.Provider == "command" {
		v, err = c.command(ctx, in, w, push, budget)
	} else {
		v, err = c.github(ctx, in, push, budget)
	}
	if err != nil {
		return nil, fmt.Errorf("ci (%s) on %s: %w", c.cfg.Provider, gitremote.Short(push.Commit), err)
	}
	return v.result(in, push, c.what()), nil
}

// target is the commit this node judges: the pushed one, or with commit:
// base the one the run started from.
func (c *CI) target(ctx context.Context, in *runtime.Input, w *workspace.Workspace) (*gitremote.PushedBranch, error) {
	if c.cfg.Commit != "base" {
		return pushedTarget(ctx, w)
	}
	branch, err := c.field(in, "branch", c.cfg.Branch)
	if err != nil {
		return nil, err
	}
	if !gitremote.ValidBranch(branch) {
		return nil, fmt.Errorf("branch %q is not a branch name", branch)
	}
	return baseTarget(w, branch)
}

// what names the judged commit in feedback.
func (c *CI) what() string {
	if c.cfg.Commit == "base" {
		return "the run's base commit"
	}
	return "the pushed commit"
}

// field is a key's rendered value when it names inputs, else its
// decoded value (defaults applied).
func (c *CI) field(in *runtime.Input, key, decoded string) (string, error) {
	if _, ok := in.Spec.Templates[key]; !ok {
		return decoded, nil
	}
	v, err := in.Render(key)
	if err != nil {
		return "", fmt.Errorf("%s: %w", key, err)
	}
	return v, nil
}

// baseTarget is the commit the run started from (commit: base), e.g. the
// tip of a branch whose CI fails. Once the run has committed, the base is
// no longer what the run stands on and a verdict on it would be stale, so
// it is refused: a ci node after the push judges the pushed commit.
func baseTarget(w *workspace.Workspace, branch string) (*gitremote.PushedBranch, error) {
	if _, err := os.Stat(filepath.Join(w.RunDir, "commit.json")); err == nil {
		return nil, fmt.Errorf("the run has committed on top of its base commit %s, so a verdict on the base would be stale: judge the pushed commit (commit: pushed)", gitremote.Short(w.Base))
	}
	// Clean-checkout CI snapshots the commit from the promotion
	// repository, which holds the base from the start.
	if _, err := w.Promotion(); err != nil {
		return nil, err
	}
	return &gitremote.PushedBranch{Ref: "refs/heads/" + branch, Commit: w.Base}, nil
}

// ciBudget is how long the node waits. A node timeout makes the runtime
// cancel the attempt and drop its outputs, so the wait ends a little
// before it and the node reports timed_out itself.
func ciBudget(timeout time.Duration) time.Duration {
	if timeout <= 0 {
		return ciDefaultTimeout
	}
	return timeout - min(timeout/10, 5*time.Second)
}

// pushedTarget is the commit ci must judge: the latest push, which must
// be the latest commit, whose tree must be the workspace's change now.
// The box is held for the check only, not for the wait: CI can take half
// an hour, and nothing in the workspace is read after this.
func pushedTarget(ctx context.Context, w *workspace.Workspace) (*gitremote.PushedBranch, error) {
	_, release, err := w.Quiet(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	push, err := promote.LastPush(w.RunDir)
	if err != nil {
		return nil, err
	}
	c, err := promote.LastCommit(w.RunDir)
	if err != nil {
		return nil, err
	}
	if c.Commit != push.Commit {
		return nil, fmt.Errorf("the run's latest commit %s was not pushed (the last push sent %s): push it before ci, which judges only what was pushed", gitremote.Short(c.Commit), gitremote.Short(push.Commit))
	}
	changes, err := w.Changes()
	if err != nil {
		return nil, err
	}
	_, cand, err := w.CandidateOf(changes)
	if err != nil {
		return nil, err
	}
	if cand.TreeHash.String() != c.Tree {
		return nil, fmt.Errorf("the workspace changed after commit %s was pushed: commit and push again, so CI judges the change as it is", gitremote.Short(c.Commit))
	}
	return push, nil
}

// result turns a verdict into the node's result: pass only on success.
func (v *ciVerdict) result(in *runtime.Input, push *gitremote.PushedBranch, what string) *runtime.Result {
	// Check names and URLs come from CI, where the agent's change can
	// name jobs: printable text only (see feedback.PlainText).
	failed := feedback.PlainTexts(v.Failed)
	sort.Strings(failed)
	url := feedback.PlainText(v.URL)
	res := &runtime.Result{Outcome: runtime.OutcomePass,
		Outputs: map[string]any{"state": v.State, "failed": failed, "url": url, "commit": push.Commit}}
	if v.State == ciSuccess {
		return res
	}
	res.Outcome = runtime.OutcomeFail
	res.Reason = fmt.Sprintf("CI %s on %s", strings.ReplaceAll(v.State, "_", " "), gitremote.Short(push.Commit))
	if len(failed) > 0 {
		res.Reason += ": " + strings.Join(failed, ", ")
	}
	head := fmt.Sprintf("CI on %s %s (%s): %s.", what, gitremote.Short(push.Commit), strings.TrimPrefix(push.Ref, "refs/heads/"), v.State)
	if len(failed) > 0 {
		head += "\nFailing: " + strings.Join(failed, ", ") + "."
	}
	if url != "" {
		head += "\nDetails: " + url
	}
	res.Reason = in.Redactor.String(res.Reason)
	res.Feedback = in.Redactor.String(feedback.PlainText(strings.TrimRight(head+"\n\n"+v.Body, "\n")))
	return res
}

// logTail keeps the last n lines of a log within max bytes, without
// timestamps and terminal escapes, which only spend the agent's context.
func logTail(log string, n, max int) string {
	log = strings.TrimRight(log, "\n")
	lines := strings.Split(log, "\n")
	cut := false
	if n > 0 && len(lines) > n {
		lines, cut = lines[len(lines)-n:], true
	}
	for i, l := range lines {
		lines[i] = strings.TrimRight(ansiRE.ReplaceAllString(stampRE.ReplaceAllString(l, ""), ""), "\r")
	}
	out := strings.Join(lines, "\n")
	if len(out) > max {
		return feedback.Tail(out, max)
	}
	if cut {
		out = "…\n" + out
	}
	return out
}

// sections joins per-check feedback, sharing budget bytes among them.
func sections(parts []string, budget int) string {
	if len(parts) == 0 {
		return ""
	}
	each := budget / len(parts)
	var b strings.Builder
	for _, p := range parts {
		if len(p) > each {
			p = strings.ToValidUTF8(p[:each], "") + "\n[…cut]"
		}
		b.WriteString(p)
		b.WriteString("\n\n")
	}
	return b.String()
}
