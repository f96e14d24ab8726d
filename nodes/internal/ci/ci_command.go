package ci

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/sandgate/sandgate/internal/gocanary"
	"github.com/sandgate/sandgate/nodes/internal/feedback"
	"github.com/sandgate/sandgate/nodes/internal/gate"
	"github.com/sandgate/sandgate/nodes/internal/gitremote"
	"github.com/sandgate/sandgate/nodes/internal/testgate"
	"github.com/sandgate/sandgate/nodes/testreport"
	"github.com/sandgate/sandgate/nodes/workspace"
	"github.com/sandgate/sandgate/runtime"
	"github.com/sandgate/sandgate/sandbox"
)

// Clean-checkout CI: the command runs in a fresh box whose workspace is a
// snapshot of the pushed commit alone, built from the run's promotion
// repository, never from the run's workspace. A change that passes only
// because of files the commit left out (ignored, generated, or written
// beside it) fails here, as it would on a CI server.

// command runs the CI command on the judged commit.
func (c *CI) command(ctx context.Context, in *runtime.Input, w *workspace.Workspace, push *gitremote.PushedBranch, budget time.Duration) (*ciVerdict, error) {
	args, err := c.run.Args(in)
	if err != nil {
		return nil, err
	}
	box, snap, done, err := commitBox(ctx, w, push.Commit)
	if err != nil {
		return nil, err
	}
	defer done()
	var res *sandbox.Result
	var forged []string
	if plan := c.canaryPlan(w, snap, args); plan != nil {
		res, forged, err = testgate.RunCanaried(ctx, box.Exec, plan, args, budget)
	} else {
		res, err = box.Exec(ctx, sandbox.Command{Args: args, Timeout: budget, OutputBytes: testgate.OutputBytes})
	}
	if err != nil {
		return nil, err
	}
	// Credentials out before the output is stored or cut (the operator
	// may have let one into the box), so no part of one is left standing.
	res.Output = []byte(in.Redactor.String(feedback.PlainText(string(res.Output))))
	testgate.SaveExcerpt(in, "ci-output.log", res)
	v := c.commandVerdict(c.run.Display(args), res, forged)
	if dir, err := in.MkDir(); err == nil {
		v.URL, _ = filepath.Abs(filepath.Join(dir, "ci-output.log"))
	}
	return v, nil
}

// canaryPlan seals and canaries a go test -json command as the test gate
// does (nil when it cannot apply or canary is off). The packages the
// run's change reaches get them; snap is the commit's files.
func (c *CI) canaryPlan(w *workspace.Workspace, snap string, args []string) *gocanary.Plan {
	o, ok := testgate.CanaryOptions(c.run, args, false)
	if c.cfg.Canary == "off" || !ok {
		return nil
	}
	changes, err := w.Changes()
	if err != nil {
		o.All = true // cannot tell what the change reaches: everything
	}
	for _, ch := range changes {
		o.Changed = append(o.Changed, ch.Path)
	}
	o.Command = args
	return gocanary.NewPlan(gocanary.DirTree(snap), o)
}

// commitBox starts a throwaway box over a snapshot of commit, with the
// run's sandbox policy, and returns the snapshot's directory. The
// snapshot comes from the promotion repository, where git_commit wrote
// the commit and from which git_push sent it; it is derived from the
// run's base snapshot (leased for the whole run), so it costs the objects
// and files the change added, not the history.
func commitBox(ctx context.Context, w *workspace.Workspace, commit string) (*sandbox.Box, string, func(), error) {
	opts, ok := w.BoxOptions()
	if !ok || w.CacheDir() == "" {
		return nil, "", nil, errors.New("clean-checkout ci: the workspace was not built by nodes.Environment")
	}
	runtime.Notef(ctx, "snapshot of the pushed commit %.12s and a clean box for CI", commit)
	lease, err := sandbox.LeaseDerivedSnapshot(ctx, w.CacheDir(), w.Snapshot, filepath.Join(w.RunDir, "promote.git"), commit)
	if err != nil {
		return nil, "", nil, fmt.Errorf("clean-checkout ci: snapshot of %s: %w", gitremote.Short(commit), err)
	}
	if lease.Commit != commit {
		lease.Release()
		return nil, "", nil, fmt.Errorf("clean-checkout ci: the snapshot is of %s, not the pushed %s", lease.Commit, commit)
	}
	state, err := os.MkdirTemp("", "sg-ci-")
	if err != nil {
		lease.Release()
		return nil, "", nil, err
	}
	cleanup := func() { gate.RemoveAll(state); lease.Release() }
	opts.Snapshot, opts.StateDir, opts.AuditPath, opts.Seed, opts.Workspace = lease.Dir, state, "", "", ""
	box, err := sandbox.Start(ctx, opts)
	if err != nil {
		cleanup()
		return nil, "", nil, fmt.Errorf("clean-checkout ci: start its box: %w", err)
	}
	return box, lease.Dir, func() { box.Close(); cleanup() }, nil
}

// commandVerdict reads the command's result: go test -json output like
// the test gate reads it, any other command by its exit code, with the
// output's tail as feedback.
func (c *CI) commandVerdict(display string, res *sandbox.Result, forged []string) *ciVerdict {
	out := string(res.Output)
	v := &ciVerdict{State: ciSuccess}
	if res.TimedOut {
		v.State = ciTimedOut
	}
	if c.run.IsGoTest() {
		rep, err := testreport.ParseGoTestJSON(out)
		if err != nil && len(forged) > 0 {
			// A report taken away entirely (code in a test binary can
			// remove its own) is judged by what the canaries say of it,
			// not by the command's exit code.
			rep, err = &testreport.Report{Format: "go-json"}, nil
		}
		if err == nil {
			rep.Problems = append(rep.Problems, forged...)
			return c.goTestVerdict(v, display, rep, res, out)
		}
	}
	if res.ExitCode != 0 || res.TimedOut || res.Dropped > 0 {
		if v.State == ciSuccess {
			v.State = ciFailure
		}
		v.Failed = []string{display}
		v.Body = fmt.Sprintf("`%s` exited with %d%s in a clean checkout of %s (only committed files are there):\n%s%s",
			display, res.ExitCode, feedback.TimedOut(res.TimedOut), c.what(), logTail(out, c.cfg.LogLines, ciFeedbackBytes-512), feedback.DiskNote(res.DiskFull, res.DiskNote))
	}
	return v
}

// goTestVerdict judges go test -json output: failing tests by name, the
// test gate's feedback for them, within the feedback bound.
func (c *CI) goTestVerdict(v *ciVerdict, display string, rep *testreport.Report, res *sandbox.Result, out string) *ciVerdict {
	testgate.CheckExit(rep, res, out)
	if res.Dropped > 0 {
		rep.Problems = append(rep.Problems, fmt.Sprintf("test output exceeded %d MiB; cannot verify", testgate.OutputBytes>>20))
	}
	if rep.Failed == 0 && len(rep.Problems) == 0 && v.State == ciSuccess {
		return v
	}
	if v.State == ciSuccess {
		v.State = ciFailure
	}
	for _, f := range rep.Failures {
		v.Failed = append(v.Failed, f.Name)
	}
	if len(v.Failed) == 0 {
		v.Failed = []string{display}
	}
	per := ciFeedbackBytes / max(1, min(len(rep.Failures), testgate.ShownFailures))
	for i := range rep.Failures {
		rep.Failures[i].Output = logTail(rep.Failures[i].Output, c.cfg.LogLines, per)
	}
	body := testgate.FailureFeedback(rep)
	if len(body) > ciFeedbackBytes {
		body = body[:ciFeedbackBytes] + "\n[…cut]"
	}
	v.Body = fmt.Sprintf("`%s` in a clean checkout of %s (only committed files are there):\n%s", display, c.what(), strings.TrimRight(body, "\n"))
	return v
}
