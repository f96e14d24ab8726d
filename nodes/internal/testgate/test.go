package testgate

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/sandgate/sandgate/blueprint"
	"github.com/sandgate/sandgate/internal/gocanary"
	"github.com/sandgate/sandgate/internal/lines"
	"github.com/sandgate/sandgate/nodes/internal/command"
	"github.com/sandgate/sandgate/nodes/internal/feedback"
	"github.com/sandgate/sandgate/nodes/internal/gate"
	"github.com/sandgate/sandgate/nodes/testreport"
	"github.com/sandgate/sandgate/nodes/verdict"
	"github.com/sandgate/sandgate/nodes/workspace"
	"github.com/sandgate/sandgate/runtime"
	"github.com/sandgate/sandgate/sandbox"
)

const (
	// OutputBytes is how much output the test node captures, far above
	// the box's default cap: every byte of it is parsed, so counts are
	// exact and a failure late in a long stream is seen. More than this
	// fails the gate; it never passes on part of the evidence.
	OutputBytes = 64 << 20
	// storedOutputBytes caps the log kept in the attempt directory.
	storedOutputBytes = 1 << 20
	// ShownFailures is how many failures and problems feedback names.
	ShownFailures = 10
)

// Test runs tests and judges them by the runner's structured report: zero
// tests is a failure, an unreadable report is a failure, a Go package that
// ran no test is a failure, and a test the plan announced but the output
// lacks is a failure.
type Test struct {
	run                    command.Command
	format, report, hidden string
	rerun                  int
	allowNoTests           []string
	allowDetection         bool
	allowVendorPatches     bool
	canary                 bool
	// hiddenNames: the agent may learn which held-out tests failed.
	hiddenNames bool
}

var _ runtime.Node = (*Test)(nil)

func newTest(spec *blueprint.Node) (runtime.Node, error) {
	c, err := blueprint.Decode[TestConfig](spec)
	if err != nil {
		return nil, err
	}
	t := &Test{run: command.Of(c.Run), format: c.Format, report: c.Report, hidden: c.Hidden,
		rerun: c.RerunFailed, allowNoTests: c.AllowNoTests, allowDetection: c.AllowTestDetection, allowVendorPatches: c.AllowVendorPatches, canary: c.Canary != "off",
		hiddenNames: c.HiddenFeedback == "names"}
	if t.report != "" {
		t.report, _ = reportPath(t.report) // checked at load by TestConfig.Validate
	}
	return t, nil
}

// HeldOut implements gate.HeldOut: the held-out tests the gate runs in a
// throwaway box of their own (see gate.Quietly), and whether the agent
// may learn their names.
func (t *Test) HeldOut() (dir string, names bool) { return t.hidden, t.hiddenNames }

// Run implements runtime.Node.
func (t *Test) Run(ctx context.Context, in *runtime.Input) (*runtime.Result, error) {
	w, fp, start, err := gate.Begin(in)
	if err != nil {
		return nil, err
	}
	args, err := t.run.Args(in)
	if err != nil {
		return nil, err
	}
	// One reading of the change serves the canaries and the checks: the
	// candidate the judge box holds (ignored files left out), captured
	// while the gate holds the run's box.
	changes, err := gate.JudgedChanges(ctx, w)
	if err != nil {
		return nil, fmt.Errorf("read the change for the test gate: %w", err)
	}
	v, err := newChangeView(w.Snapshot, changes, t.hidden)
	if err != nil {
		return nil, err
	}
	py, err := t.pyCanaryPlan(ctx, v, args)
	if err != nil {
		return nil, err
	}
	var rep *testreport.Report
	var raw string
	if py != nil {
		rep, raw, err = t.runWithReport(ctx, w, in, args, "test.log", py)
	} else {
		rep, raw, err = t.runOnce(ctx, w, in, args, "test.log", t.canaryPlan(v, args, false), true)
	}
	if err != nil {
		return nil, err
	}
	checks, details := t.harnessChecks(v, changes, rep, t.run.Display(args))
	mods, err := t.moduleChecks(ctx, w, v, changes, in.Spec.Timeout)
	if err != nil {
		return nil, err
	}
	checks = append(checks, mods...)
	var flaky []string
	if rep != nil && t.rerun > 0 && rep.Failed > 0 && len(rep.Problems) == 0 {
		rep, flaky, err = t.rerunFailures(ctx, w, in, v, args, rep)
		if err != nil {
			return nil, err
		}
	}
	if len(checks) > 0 {
		if rep == nil {
			rep = &testreport.Report{Format: t.format}
			checks = append(checks, "the test output holds no report sandgate can read (go test -json, JUnit XML or TAP)")
		}
		rep.Problems = append(checks, rep.Problems...)
	}
	return t.verdict(in, w, fp, start, rep, raw, flaky, details)
}

// harnessChecks judges the change by what the harness reads itself, not
// by what the test binary said (see testscope.go and testdetect.go): a new
// module boundary, test-mode detection in production code, and, for go
// test -json, declared tests of a reported package that never ran. It is
// called on the first run's report, before re-runs select tests. details
// record the blueprint's opt-outs for the verdict, with what the skipped
// check found, so a reviewer sees what was let through.
func (t *Test) harnessChecks(v *changeView, changes []sandbox.Change, rep *testreport.Report, cmd string) (out []string, details map[string]any) {
	out = moduleBoundaries(v, changes)
	if found := detectsTestMode(v, changes, !t.allowVendorPatches); !t.allowDetection {
		out = append(out, found...)
	} else {
		details = map[string]any{"allow_test_detection": true, "test_detection_allowed": append([]string{}, found...)}
	}
	if t.allowVendorPatches {
		if details == nil {
			details = map[string]any{}
		}
		details["allow_vendor_patches"] = true
	}
	if rep != nil && rep.Format == "go-json" {
		out = append(out, declaredTests(v, rep, cmd)...)
	}
	return out, details
}

// exec runs a test command with the test node's larger output cap; the
// cap travels in the request to the box, out of reach of the tests. The
// output streams to the attempt's output.log as the judge box prints it,
// so the run page shows a running test gate.
func (t *Test) exec(ctx context.Context, w *workspace.Workspace, in *runtime.Input, cmd []string) (*sandbox.Result, error) {
	live, closeLive := command.Live(in)
	defer closeLive()
	return w.Command(ctx, sandbox.Command{Args: cmd, Timeout: in.Spec.Timeout, OutputBytes: OutputBytes, Live: live})
}

// runOnce runs cmd and reads its report. first marks the gate's own run,
// whose Go packages must each have run a test (re-runs select a few tests
// on purpose); plan, when not nil, is the canaries compiled into it.
func (t *Test) runOnce(ctx context.Context, w *workspace.Workspace, in *runtime.Input, cmd []string, log string, plan *gocanary.Plan, first bool) (*testreport.Report, string, error) {
	if t.report != "" {
		return t.runWithReport(ctx, w, in, cmd, log, nil)
	}
	var res *sandbox.Result
	var forged []string
	var err error
	if plan != nil {
		res, forged, err = t.runCanaried(ctx, w, plan, cmd, in.Spec.Timeout)
		canaryAlert(in, forged)
	} else {
		res, err = t.exec(ctx, w, in, cmd)
	}
	if err != nil {
		return nil, "", err
	}
	SaveExcerpt(in, log, res)
	out := string(res.Output)
	rep, perr := testreport.Detect(t.format, out)
	if res.Dropped > 0 {
		if perr != nil {
			rep = &testreport.Report{Format: t.format}
		}
		rep.Problems = append(rep.Problems, fmt.Sprintf("test output exceeded %d MiB (%d more bytes were dropped); cannot verify", OutputBytes>>20, res.Dropped))
		return rep, out, nil
	}
	if perr != nil && len(forged) == 0 {
		return nil, out, nil
	}
	if perr != nil {
		// Nothing readable is left, and the canaries say whose report
		// was taken away: fail naming it, not as an unreadable output.
		rep = &testreport.Report{Format: "go-json"}
	}
	rep.Problems = append(rep.Problems, forged...)
	if first && rep.Format == "go-json" {
		rep.CheckPackages(t.allowNoTests)
	}
	CheckExit(rep, res, out)
	if res.DiskFull {
		rep.Problems = append(rep.Problems, res.DiskNote)
	}
	return rep, out, nil
}

// runWithReport removes the report file, runs cmd, and reads the report
// the command wrote, through the harness's own view of the workspace. A
// report left there before the run, or one that is not a regular file,
// is not evidence. py, when not nil, is the pytest canaries planted for
// the run, which the report must show.
func (t *Test) runWithReport(ctx context.Context, w *workspace.Workspace, in *runtime.Input, cmd []string, log string, py *pyCanary) (*testreport.Report, string, error) {
	rm, err := w.Command(ctx, sandbox.Command{Args: []string{"rm", "-f", "--", t.report}, Timeout: time.Minute})
	if err != nil {
		return nil, "", err
	}
	if rm.ExitCode != 0 {
		return reportProblem(fmt.Sprintf("report %s could not be removed before the test run, so one left there earlier could pass as this run's: %s", t.report, strings.TrimSpace(string(rm.Output)))), "", nil
	}
	since := time.Now()
	res, err := t.exec(ctx, w, in, cmd)
	if err != nil {
		return nil, "", err
	}
	SaveExcerpt(in, log, res)
	out := string(res.Output)
	data, err := readReport(ctx, w, t.report, since)
	if err != nil {
		return reportProblem(err.Error() + feedback.TimedOut(res.TimedOut)), out, nil
	}
	rep, err := testreport.ParseJUnit(data)
	if err != nil {
		return reportProblem(fmt.Sprintf("report %s: %v", t.report, err)), out, nil
	}
	if py != nil {
		canaryAlert(in, py.check(rep, res, out))
		return rep, out, nil
	}
	CheckExit(rep, res, out)
	return rep, out, nil
}

func reportProblem(msg string) *testreport.Report {
	return &testreport.Report{Format: "junit", Problems: []string{msg}}
}

// CheckExit fails a run whose command failed although its report shows no
// failure: the exit code is evidence too.
func CheckExit(rep *testreport.Report, res *sandbox.Result, out string) {
	if res.ExitCode != 0 && rep.Failed == 0 && len(rep.Problems) == 0 {
		rep.Problems = append(rep.Problems, fmt.Sprintf("the test command exited with %d%s although no test failed:\n%s", res.ExitCode, feedback.TimedOut(res.TimedOut), feedback.Tail(out, 2048)))
	}
}

// SaveExcerpt keeps at most storedOutputBytes of a command's output in the
// attempt directory: the head and the tail, where runners print failures
// and summaries. The parse saw all of it.
func SaveExcerpt(in *runtime.Input, name string, r *sandbox.Result) {
	dir, err := in.MkDir()
	if err != nil {
		return
	}
	data := r.Output
	// Credentials the operator let into the box must not reach the run
	// directory; redact before cutting, so no fragment of one survives.
	if w, err := workspace.Of(in); err == nil && w.Redactor() != nil {
		data = w.Redactor().Bytes(data)
	}
	if len(data) > storedOutputBytes {
		head, end := data[:storedOutputBytes/4], data[len(data)-storedOutputBytes*3/4:]
		note := fmt.Sprintf("\n[sandgate: %d bytes left out of this log; the gate read all of them]\n", len(data)-len(head)-len(end))
		data = slices.Concat(head, []byte(note), end)
	}
	if r.Dropped > 0 {
		data = append(slices.Clip(data), fmt.Sprintf("\n[sandgate: %d more bytes were not captured]\n", r.Dropped)...)
	}
	_ = os.WriteFile(filepath.Join(dir, name), data, 0o644)
}

// rerunFailures runs only the failing tests again; a test that now
// reports a pass (in the same package) is flaky, the rest are broken. A
// re-run that is not clean (unreadable, cut off, a problem) clears nothing.
func (t *Test) rerunFailures(ctx context.Context, w *workspace.Workspace, in *runtime.Input, v *changeView, args []string, rep *testreport.Report) (*testreport.Report, []string, error) {
	still := map[string]bool{}
	for _, k := range rep.TopLevelFailures() {
		still[k] = true
	}
	for i := 0; i < t.rerun && len(still) > 0; i++ {
		// A re-run is judged like the first run: sealed, with fresh canaries
		// added to its selection (a forger would otherwise wait for it).
		plan := t.canaryPlan(v, args, true)
		again, _, err := t.runOnce(ctx, w, in, rerunArgs(t.run, args, still, plan.Names()...), fmt.Sprintf("rerun-%d.log", i+1), plan, false)
		if err != nil {
			return nil, nil, err
		}
		if again == nil || len(again.Problems) > 0 {
			break
		}
		for k := range still {
			if again.PassedTop(k) {
				delete(still, k)
			}
		}
	}
	var flaky []string
	kept := rep.Failures[:0]
	for _, f := range rep.Failures {
		top, _, _ := strings.Cut(f.Name, "/")
		if still[testreport.Key(f.Package, top)] {
			kept = append(kept, f)
		} else if !strings.Contains(f.Name, "/") {
			flaky = append(flaky, f.Name)
		}
	}
	rep.Passed += rep.Failed - len(kept)
	rep.Failed, rep.Failures = len(kept), kept
	return rep, flaky, nil
}

// rerunArgs selects the still-failing top-level tests, and the extra
// names (canaries), by exact name: a shell line gets a quoted -run
// appended, an argv two more arguments.
func rerunArgs(c command.Command, args []string, still map[string]bool, extra ...string) []string {
	re := rerunPattern(still, extra...)
	if c.Argv == nil {
		return []string{"sh", "-c", fmt.Sprintf("%s -run %s", args[2], command.Quote(re))}
	}
	return append(append([]string(nil), args...), "-run", re)
}

// rerunPattern matches exactly the still-failing top-level tests and
// the extra names.
func rerunPattern(still map[string]bool, extra ...string) string {
	set := map[string]bool{}
	for _, n := range extra {
		set[regexp.QuoteMeta(n)] = true
	}
	for k := range still {
		_, name := testreport.SplitKey(k)
		set[regexp.QuoteMeta(name)] = true
	}
	names := make([]string, 0, len(set))
	for n := range set {
		names = append(names, n)
	}
	sort.Strings(names)
	return "^(" + strings.Join(names, "|") + ")$"
}

func (t *Test) verdict(in *runtime.Input, w *workspace.Workspace, fp string, start time.Time, rep *testreport.Report, raw string, flaky []string, details map[string]any) (*runtime.Result, error) {
	res := &runtime.Result{Outputs: map[string]any{"passed": 0, "failed": 0, "skipped": 0, "failures": []string{}, "flaky": flaky}}
	g := verdict.GateResult{Tests: &verdict.TestCounts{}, Details: details}
	switch {
	case rep == nil:
		g.Reason = "the test output holds no report sandgate can read (go test -json, JUnit XML or TAP)"
		res.Feedback = "Tests could not be judged: " + g.Reason + ". Output:\n" + feedback.Tail(raw, 4096)
	case rep.Total() == 0 && len(rep.Problems) == 0:
		g.Reason = "no test ran"
		res.Feedback = "No test ran: a change with zero tests executed is not verified. Output:\n" + feedback.Tail(raw, 2048)
	default:
		names := []string{}
		for _, f := range rep.Failures {
			names = append(names, f.Name)
		}
		res.Outputs["passed"], res.Outputs["failed"], res.Outputs["skipped"], res.Outputs["failures"] = rep.Passed, rep.Failed, rep.Skipped, names
		*g.Tests = verdict.TestCounts{Passed: rep.Passed, Failed: rep.Failed, Skipped: rep.Skipped}
		g.Pass = rep.Failed == 0 && len(rep.Problems) == 0
		if !g.Pass {
			g.Reason = fmt.Sprintf("%d failed, %d problem(s)", rep.Failed, len(rep.Problems))
			if len(rep.Problems) > 0 {
				g.Reason += ": " + strings.TrimSuffix(lines.First(rep.Problems[0]), ":")
			}
			res.Feedback = FailureFeedback(rep)
		}
	}
	if len(flaky) > 0 {
		res.Feedback += fmt.Sprintf("\nFlaky (failed, then passed on re-run): %s\n", strings.Join(flaky, ", "))
	}
	return gate.Finish(in, "tests", fp, start, g, res)
}

func FailureFeedback(rep *testreport.Report) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Tests failed: %d passed, %d failed.\n", rep.Passed, rep.Failed)
	for i, p := range rep.Problems {
		if i == ShownFailures {
			fmt.Fprintf(&b, "\n… and %d more problems\n", len(rep.Problems)-ShownFailures)
			break
		}
		fmt.Fprintf(&b, "\n%s\n", p)
	}
	for i, f := range rep.Failures {
		if i == ShownFailures {
			fmt.Fprintf(&b, "\n… and %d more failing tests\n", len(rep.Failures)-ShownFailures)
			break
		}
		name := f.Name
		if f.Package != "" {
			name += " (" + f.Package + ")"
		}
		fmt.Fprintf(&b, "\n--- %s\n%s\n", name, strings.TrimRight(f.Output, "\n"))
	}
	return b.String()
}
