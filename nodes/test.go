package nodes

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/sandgate/sandgate/blueprint"
	"github.com/sandgate/sandgate/runtime"
)

// Test runs tests and judges them by the runner's structured report: zero
// tests is a failure, an unreadable report is a failure, and a test the
// plan announced but the output lacks is a failure.
type Test struct {
	run, format, report, hidden string
	rerun                       int
}

var _ runtime.Node = (*Test)(nil)

func newTest(spec *blueprint.Node) (runtime.Node, error) {
	t := &Test{run: spec.Config["run"].(string), format: "auto"}
	t.format, _ = spec.Config["format"].(string)
	t.report, _ = spec.Config["report"].(string)
	t.hidden, _ = spec.Config["hidden"].(string)
	t.rerun, _ = spec.Config["rerun_failed"].(int)
	if t.rerun > 0 && t.format != "go-json" && !strings.Contains(t.run, "go test") {
		return nil, fmt.Errorf("rerun_failed needs go test -json (format: go-json)")
	}
	return t, nil
}

// Run implements runtime.Node.
func (t *Test) Run(ctx context.Context, in *runtime.Input) (*runtime.Result, error) {
	w, fp, start, err := beginGate(in)
	if err != nil {
		return nil, err
	}
	if t.hidden != "" {
		cleanup, err := w.placeHidden(ctx, t.hidden)
		if err != nil {
			return nil, err
		}
		defer cleanup()
	}
	rep, raw, err := t.runOnce(ctx, w, in, t.run, "test.log")
	if err != nil {
		return nil, err
	}
	var flaky []string
	if rep != nil && t.rerun > 0 && rep.Failed > 0 && len(rep.Problems) == 0 {
		rep, flaky, err = t.rerunFailures(ctx, w, in, rep)
		if err != nil {
			return nil, err
		}
	}
	return t.verdict(in, w, fp, start, rep, raw, flaky)
}

func (t *Test) runOnce(ctx context.Context, w *Workspace, in *runtime.Input, cmd, log string) (*TestReport, string, error) {
	res, err := w.Exec(ctx, cmd, in.Spec.Timeout)
	if err != nil {
		return nil, "", err
	}
	saveOutput(in, log, res)
	out := string(res.Output)
	if t.report != "" {
		rr, err := w.Exec(ctx, "cat -- "+shellQuote(t.report), time.Minute)
		if err != nil {
			return nil, out, err
		}
		if rr.ExitCode != 0 {
			return nil, out, nil
		}
		rep, perr := ParseJUnit(rr.Output)
		if perr != nil {
			return nil, out, nil
		}
		return rep, out, nil
	}
	format := t.format
	if format == "" {
		format = "auto"
	}
	rep, perr := detectReport(format, out)
	if perr != nil {
		return nil, out, nil
	}
	if res.ExitCode != 0 && rep.Failed == 0 && len(rep.Problems) == 0 {
		rep.Problems = append(rep.Problems, fmt.Sprintf("the test command exited with %d%s although no test failed:\n%s", res.ExitCode, timedOut(res), tail(out, 2048)))
	}
	if res.DiskFull {
		rep.Problems = append(rep.Problems, res.DiskNote)
	}
	return rep, out, nil
}

// rerunFailures runs only the failing tests again; those that pass now
// are flaky, the rest are broken.
func (t *Test) rerunFailures(ctx context.Context, w *Workspace, in *runtime.Input, rep *TestReport) (*TestReport, []string, error) {
	failing := rep.topLevelFailures()
	still := map[string]bool{}
	for _, n := range failing {
		still[n] = true
	}
	for i := 0; i < t.rerun && len(still) > 0; i++ {
		var names []string
		for n := range still {
			names = append(names, regexp.QuoteMeta(n))
		}
		cmd := fmt.Sprintf("%s -run %s", t.run, shellQuote("^("+strings.Join(names, "|")+")$"))
		again, _, err := t.runOnce(ctx, w, in, cmd, fmt.Sprintf("rerun-%d.log", i+1))
		if err != nil {
			return nil, nil, err
		}
		if again == nil {
			break
		}
		now := map[string]bool{}
		for _, n := range again.topLevelFailures() {
			now[n] = true
		}
		still = now
	}
	var flaky []string
	kept := rep.Failures[:0]
	for _, f := range rep.Failures {
		top, _, _ := strings.Cut(f.Name, "/")
		if still[top] {
			kept = append(kept, f)
		} else if !strings.Contains(f.Name, "/") {
			flaky = append(flaky, f.Name)
		}
	}
	rep.Passed += rep.Failed - len(kept)
	rep.Failed, rep.Failures = len(kept), kept
	return rep, flaky, nil
}

func (t *Test) verdict(in *runtime.Input, w *Workspace, fp string, start time.Time, rep *TestReport, raw string, flaky []string) (*runtime.Result, error) {
	res := &runtime.Result{Outputs: map[string]any{"passed": 0, "failed": 0, "skipped": 0, "failures": []string{}, "flaky": flaky}}
	g := GateResult{Tests: &TestCounts{}}
	switch {
	case rep == nil:
		g.Reason = "the test output holds no report sandgate can read (go test -json, JUnit XML or TAP)"
		res.Feedback = "Tests could not be judged: " + g.Reason + ". Output:\n" + tail(raw, 4096)
	case rep.Total() == 0 && len(rep.Problems) == 0:
		g.Reason = "no test ran"
		res.Feedback = "No test ran: a change with zero tests executed is not verified. Output:\n" + tail(raw, 2048)
	default:
		var names []string
		for _, f := range rep.Failures {
			names = append(names, f.Name)
		}
		res.Outputs["passed"], res.Outputs["failed"], res.Outputs["skipped"], res.Outputs["failures"] = rep.Passed, rep.Failed, rep.Skipped, names
		*g.Tests = TestCounts{Passed: rep.Passed, Failed: rep.Failed, Skipped: rep.Skipped}
		g.Pass = rep.Failed == 0 && len(rep.Problems) == 0
		if !g.Pass {
			g.Reason = fmt.Sprintf("%d failed, %d problem(s)", rep.Failed, len(rep.Problems))
			res.Feedback = failureFeedback(rep)
		}
	}
	if len(flaky) > 0 {
		res.Feedback += fmt.Sprintf("\nFlaky (failed, then passed on re-run): %s\n", strings.Join(flaky, ", "))
	}
	return gate(in, w, "tests", fp, start, g, res)
}

func failureFeedback(rep *TestReport) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Tests failed: %d passed, %d failed.\n", rep.Passed, rep.Failed)
	for _, p := range rep.Problems {
		fmt.Fprintf(&b, "\n%s\n", p)
	}
	for i, f := range rep.Failures {
		if i == 10 {
			fmt.Fprintf(&b, "\n… and %d more failing tests\n", len(rep.Failures)-10)
			break
		}
		fmt.Fprintf(&b, "\n--- %s\n%s\n", f.Name, strings.TrimRight(f.Output, "\n"))
	}
	return b.String()
}

// shellQuote quotes s for sh.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
