package runtime_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/sandgate/sandgate/runtime"
)

// timeoutBlueprint: the gate's first attempt sleeps past its timeout, the
// retry edge runs it again and the second passes.
const timeoutBlueprint = `version: 1
name: slowgate
start: gate
nodes:
  gate:
    type: gate
    sleep: 1m
    sleep_once: true
    timeout: 50ms
    on_pass: done
    on_fail: {to: gate, max: 1}
  done: {type: succeed}
`

// finishedLine is the journal line of node's attempt n's node_finished.
func finishedLine(t *testing.T, lines []string, node string, n int) int {
	t.Helper()
	for i, l := range lines {
		if strings.Contains(l, `"type":"node_finished"`) && strings.Contains(l, `"node":"`+node+`","attempt":`+strconv.Itoa(n)+`,`) {
			return i
		}
	}
	t.Fatalf("no node_finished of %s#%d in the journal:\n%s", node, n, strings.Join(lines, "\n"))
	return -1
}

// TestNodeTimeoutIsJournaled: an attempt the runtime stopped at its node's
// timeout says so in its node_finished event and in the summary; an
// attempt that ended by its node's outcome does not.
func TestNodeTimeoutIsJournaled(t *testing.T) {
	f := newFixture(t, timeoutBlueprint)
	sum := f.run(t, context.Background(), nil)
	if sum.Status != runtime.StatusSucceeded || len(sum.Attempts) != 2 {
		t.Fatalf("run: %s (%s), attempts %+v", sum.Status, sum.Reason, sum.Attempts)
	}
	first, second := sum.Attempts[0], sum.Attempts[1]
	if !first.TimedOut || first.Outcome != runtime.OutcomeFail || first.Feedback != "node gate timed out after 50ms" {
		t.Errorf("the timed-out attempt: %+v", first)
	}
	if second.TimedOut || second.Outcome != runtime.OutcomePass {
		t.Errorf("the attempt that passed: %+v", second)
	}
	b, err := os.ReadFile(filepath.Join(sum.Dir, "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	if l := lines[finishedLine(t, lines, "gate", 1)]; !strings.Contains(l, `"timed_out":true`) {
		t.Errorf("the timed-out attempt's line: %s", l)
	}
	if l := lines[finishedLine(t, lines, "gate", 2)]; strings.Contains(l, "timed_out") {
		t.Errorf("the passing attempt's line names timed_out: %s", l)
	}
}

// TestJournalBeforeTimedOutResumes: a journal written before timed_out
// existed (its timed-out attempt a fail with the runtime's text alone)
// reads, resumes and summarizes, the attempt as not timed out.
func TestJournalBeforeTimedOutResumes(t *testing.T) {
	f := newFixture(t, timeoutBlueprint)
	sum := f.run(t, context.Background(), nil)
	journal := filepath.Join(sum.Dir, "events.jsonl")
	b, err := os.ReadFile(journal)
	if err != nil {
		t.Fatal(err)
	}
	// Cut the journal after the timed-out attempt, as a crash would, and
	// write that attempt's line as an older sandgate did.
	lines := strings.Split(string(b), "\n")
	i := finishedLine(t, lines, "gate", 1)
	old := strings.Replace(lines[i], `"timed_out":true,`, "", 1)
	if old == lines[i] || strings.Contains(old, "timed_out") {
		t.Fatalf("the line holds no timed_out to take out: %s", lines[i])
	}
	lines = append(lines[:i], old, "")
	if err := os.WriteFile(journal, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	events, err := runtime.ReadJournal(journal)
	if err != nil {
		t.Fatal(err)
	}
	if ev := events[len(events)-1]; ev.Type != runtime.EvNodeFinished || ev.TimedOut || ev.Outcome != runtime.OutcomeFail {
		t.Fatalf("the old line read as %+v", ev)
	}
	got, err := f.rt.Resume(context.Background(), sum.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != runtime.StatusSucceeded || got.Resumes != 1 || len(got.Attempts) != 2 {
		t.Fatalf("after resume: %s (%s), resumes %d, attempts %+v", got.Status, got.Reason, got.Resumes, got.Attempts)
	}
	if a := got.Attempts[0]; a.TimedOut || a.Outcome != runtime.OutcomeFail || a.Feedback != "node gate timed out after 50ms" {
		t.Errorf("the old attempt: %+v", a)
	}
	if executions(t, f.ws)["gate"] != 3 {
		t.Errorf("the gate ran %d times, want 3 (twice, then its second attempt again)", executions(t, f.ws)["gate"])
	}
}

// TestHandoffSaysTimedOut: the hand-off lists an attempt the runtime
// stopped at its timeout as timed out, not as the node's fail.
func TestHandoffSaysTimedOut(t *testing.T) {
	f := newFixture(t, strings.Replace(timeoutBlueprint, "on_fail: {to: gate, max: 1}\n  done: {type: succeed}\n",
		"on_fail: stuck\n  done: {type: succeed}\n  stuck: {type: handoff}\n", 1))
	sum := f.run(t, context.Background(), nil)
	if sum.Status != runtime.StatusHandedOff {
		t.Fatalf("run: %s (%s)", sum.Status, sum.Reason)
	}
	b, err := os.ReadFile(filepath.Join(sum.Dir, "handoff.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "`gate` (gate) attempt 1: **timed out** → stuck") {
		t.Fatalf("handoff.md lists the attempt otherwise:\n%s", b)
	}
	if !strings.Contains(string(b), " after step `gate` (gate) timed out.") {
		t.Fatalf("handoff.md's lead does not say the gate timed out:\n%s", b)
	}
}
