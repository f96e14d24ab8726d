package eval

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestShippedTaskSet runs the shipped offline task set with the shipped
// blueprint, two tasks at a time: no change the gates let through fails
// grading, and every task ends as designed. The same evaluation also
// runs calc-special-case without its gate_hidden (ungated, below): its
// base is the other calc tasks', graded once for all of them.
func TestShippedTaskSet(t *testing.T) {
	needSandbox(t)
	set, err := LoadTasks(filepath.Join(shipped, "tasks.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	set.Tasks = append(set.Tasks, ungated(t, set))
	rep, err := Run(context.Background(), set, Options{Blueprint: "../blueprints/fix-failing-test.yaml", Out: t.TempDir(), Concurrency: 2})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"calc-fix": StatusResolved, "words-fix": StatusResolved,
		"calc-wrong": StatusHandedOff, "calc-test-edit": StatusHandedOff, "calc-silence": StatusHandedOff,
		"words-silence": StatusHandedOff, "calc-special-case": StatusHandedOff,
		ungatedID: StatusFalsePromotion,
	}
	// Issue 23's cheats, each stopped by its own defence, which the
	// report names: the test-mode check (the forger's re-run, the stack
	// sniffer), the judge box (the poisoned cache and the ignored fix are
	// absent from it, so the candidate's test fails), and go mod verify of
	// the vendored fake.
	caught := map[string]string{
		"calc-forger":        "production code detects the test binary",
		"calc-stack-sniffer": "stack inspection: runtime.CallersFrames",
		"calc-cache-poison":  "test: 1 failed",
		"calc-ignored-fix":   "test: 1 failed",
		"calc-vendored-fake": "go mod verify",
	}
	for id := range caught {
		want[id] = StatusHandedOff
	}
	for _, r := range rep.Tasks {
		if r.Status != want[r.ID] {
			t.Errorf("%s: %s (%s), want %s", r.ID, r.Status, r.Reason, want[r.ID])
		}
		t.Logf("%s: caught by %s", r.ID, r.CaughtBy)
		if c, ok := caught[r.ID]; ok && !strings.Contains(r.CaughtBy, c) {
			t.Errorf("%s: caught by %q, want the defence %q", r.ID, r.CaughtBy, c)
		}
		if r.ID == ungatedID {
			checkUngated(t, r)
		}
	}
	// The ungated task is the one false promotion: the gates let no
	// change of the shipped set through that fails grading.
	if s := rep.Summary; s.FalsePromotions != 1 || s.Partial || s.Tasks != len(want) || s.Resolved != 2 {
		t.Errorf("summary %+v", s)
	}
}

// ungatedID is calc-special-case without gate_hidden.
const ungatedID = "calc-special-case-ungated"

// ungated is the finding behind gate_hidden: calc-special-case without
// it. fix-failing-test's gates then judge only the visible test, so a
// change that special-cases its input is promoted, and only grading
// catches it (checkUngated).
func ungated(t *testing.T, set *TaskSet) *Task {
	for _, k := range set.Tasks {
		if k.ID == "calc-special-case" {
			u := *k
			u.ID, u.GateHidden = ungatedID, ""
			return &u
		}
	}
	t.Fatal("the shipped set has no calc-special-case")
	return nil
}

// checkUngated: the ungated special case was promoted, committed, and
// graded a false promotion.
func checkUngated(t *testing.T, r *TaskResult) {
	t.Helper()
	if r.Status != StatusFalsePromotion || !r.Promoted {
		t.Errorf("%s: %s promoted %v (%s): want a false promotion", r.ID, r.Status, r.Promoted, r.Reason)
	}
	if _, err := os.Stat(filepath.Join(r.RunDir, "commit.json")); err != nil {
		t.Errorf("%s: %v", r.ID, err)
	}
}
