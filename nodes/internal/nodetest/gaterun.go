package nodetest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/sandgate/sandgate/runtime"
	"github.com/sandgate/sandgate/runtime/runtimetest"
)

// setupFailed is the reason of GateRun's terminal for a prep step that
// failed: the run ends there, never at the gate.
const setupFailed = "the test's setup failed"

// GateRun runs a one-gate blueprint after an optional shell step and
// returns the summary and the gate's last attempt. The shell step plants
// the attack, so it must work: when it fails (a typo, a tool the box
// lacks) the gate never runs and the test fails with the step's output,
// rather than the gate failing for a reason the test did not mean.
func GateRun(t testing.TB, repo, prep, gateYAML string) (*runtime.Summary, runtime.AttemptInfo) {
	t.Helper()
	if prep == "" {
		prep = "true"
	}
	src := "version: 1\nname: g\nstart: prep\nnodes:\n  prep: {type: shell, run: " + Quote(prep) + ", on_pass: gate, on_fail: setup}\n  gate:\n" +
		Indent(gateYAML) + "    on_pass: ok\n    on_fail: no\n  ok: {type: succeed}\n  no: {type: fail, reason: gate failed}\n" +
		"  setup: {type: fail, reason: " + Quote(setupFailed) + "}\n"
	sum := NewHarness(t, repo).Run(t, src, nil)
	if p := LastAttempt(sum, "prep"); p.Outcome != runtime.OutcomePass {
		t.Fatalf("%s, so the gate never judged what the test meant to plant (run %s: %s):\n%s%s\n%s",
			setupFailed, sum.Status, sum.Reason, p.Error, p.Feedback, prep)
	}
	return sum, LastAttempt(sum, "gate")
}

// MustFail fails the test unless attempt a of the run failed with a
// reason or feedback holding each of want, and the run ended by that
// verdict: a run that ended because a node broke, timed out or the
// harness gave up judged nothing, whatever its feedback says.
func MustFail(t testing.TB, sum *runtime.Summary, a runtime.AttemptInfo, want ...string) {
	t.Helper()
	if err := runtimetest.EndedByVerdict(sum); err != nil {
		t.Fatalf("the run did not end by the gate's verdict, so it proves nothing: %v", err)
	}
	if sum.Status != runtime.StatusFailed || a.Outcome != runtime.OutcomeFail {
		t.Fatalf("the gate passed unverified work: run %s, gate %s\n%s", sum.Status, a.Outcome, a.Feedback)
	}
	for _, w := range want {
		if !strings.Contains(a.Feedback, w) {
			t.Fatalf("feedback lacks %q:\n%s", w, a.Feedback)
		}
	}
	var v map[string]any
	if err := json.Unmarshal(GateAttemptFile(t, sum, "verify.json"), &v); err != nil || v["pass"] != false {
		t.Fatalf("verify.json does not record a failed gate: %v %v", v, err)
	}
}

// AssertNothingPromoted fails when the run committed anything, and when
// it ended by no node's verdict (runtimetest.EndedByVerdict): a run that
// crashed promoted nothing either, but stopped no attack.
func AssertNothingPromoted(t testing.TB, sum *runtime.Summary) {
	t.Helper()
	if sum.Status == runtime.StatusSucceeded {
		t.Fatalf("the run succeeded: %s", sum.Reason)
	}
	if b, err := os.ReadFile(filepath.Join(sum.Dir, "commit.json")); err == nil {
		t.Fatalf("a commit was made: %s", b)
	}
	if err := runtimetest.EndedByVerdict(sum); err != nil {
		t.Fatalf("the run promoted nothing, but not by a verdict, so it proves nothing: %v", err)
	}
}

// AssertBrokeUnpromoted is AssertNothingPromoted for a test whose node
// breaks on purpose: the run must have ended by node's break, with an
// error holding want, and committed nothing.
func AssertBrokeUnpromoted(t testing.TB, sum *runtime.Summary, node, want string) {
	t.Helper()
	if b, err := os.ReadFile(filepath.Join(sum.Dir, "commit.json")); err == nil {
		t.Fatalf("a commit was made: %s", b)
	}
	a := LastAttempt(sum, node)
	if sum.Status != runtime.StatusFailed || sum.Kind != "node_error" || !strings.Contains(a.Error, want) {
		t.Fatalf("want the run ended by node %s breaking with %q, got run %s (%s): %s\n%s", node, want, sum.Status, sum.Kind, sum.Reason, a.Error)
	}
}

// GateAttemptFile reads a file of the gate's last attempt directory.
func GateAttemptFile(t testing.TB, sum *runtime.Summary, name string) []byte {
	t.Helper()
	return AttemptFile(t, sum, "gate", name)
}

// AttemptFile reads a file of node's last attempt directory.
func AttemptFile(t testing.TB, sum *runtime.Summary, node, name string) []byte {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(sum.Dir, "nodes", node, "*", name))
	if len(files) == 0 {
		t.Fatalf("no %s in %s's attempt directory", name, node)
	}
	sort.Strings(files)
	b, err := os.ReadFile(files[len(files)-1])
	if err != nil {
		t.Fatal(err)
	}
	return b
}
