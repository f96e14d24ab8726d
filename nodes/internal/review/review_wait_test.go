package review_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sandgate/sandgate/nodes"
	"github.com/sandgate/sandgate/nodes/internal/nodetest"
	"github.com/sandgate/sandgate/nodes/internal/review"
	"github.com/sandgate/sandgate/runtime"
)

// waitEntry polls the queue until its only entry satisfies ok. The limit
// only keeps a broken node from hanging the test; nothing is timed.
func waitEntry(t *testing.T, q *nodes.ReviewQueue, ok func(nodes.ReviewEntry) bool) nodes.ReviewEntry {
	t.Helper()
	for limit := time.Now().Add(3 * time.Minute); time.Now().Before(limit); time.Sleep(20 * time.Millisecond) {
		es, _ := q.List()
		if len(es) > 1 {
			t.Fatalf("the run queued %d entries, want one: %+v", len(es), es)
		}
		if len(es) == 1 && ok(es[0]) {
			return es[0]
		}
	}
	es, _ := q.List()
	t.Fatalf("the entry never reached the awaited state: %+v", es)
	return nodes.ReviewEntry{}
}

// events are the journal's events of one type for one node.
func events(t *testing.T, runDir, node string, typ runtime.EventType) []runtime.Event {
	t.Helper()
	evs, err := runtime.ReadJournal(filepath.Join(runDir, "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var out []runtime.Event
	for _, ev := range evs {
		if ev.Node == node && ev.Type == typ {
			out = append(out, ev)
		}
	}
	return out
}

const waitAgentFlow = `version: 1
name: wait
start: implement
nodes:
  implement: {type: agent, prompt: fix calc, model: "script:SCRIPT", next: test}
  test: {type: test, run: go test -json ./..., on_pass: commit, on_fail: stuck}
  commit: {type: git_commit, branch: fix/add, message: "${{ outputs.implement.summary }}", next: review}
  review:
    type: review
    dir: REVIEWS
    wait: 10m
    on_pass: done
    on_fail: {to: implement, max: 1}
  done: {type: succeed}
  stuck: {type: handoff}
`

const waitAgentScript = `- tool_calls:
    - {function: {name: edit_file, arguments: '{"path":"calc.go","old":"a - b","new":"a + b"}'}}
- content: Fixed the sign in Add.
- tool_calls:
    - {function: {name: edit_file, arguments: '{"path":"calc.go","old":"// Add returns the sum of a and b.","new":"// Add returns a + b; Add(0, 0) is 0."}'}}
- content: Documented Add(0, 0) as the reviewer asked.
`

// TestReviewWaitRetryUpdatesEntry: a scripted agent's change waits in the
// local queue; a reviewer rejects it with a note from another goroutine,
// the node fails with the note as feedback and the retry edge takes it to
// the agent, whose second commit updates the same entry (the first commit
// in its history, back to pending); approving it passes the run.
func TestReviewWaitRetryUpdatesEntry(t *testing.T) {
	defer review.FastReviewPolling(nil)()
	repo := nodetest.SeedRepo(t)
	dir := t.TempDir()
	script := filepath.Join(dir, "fix.yaml")
	if err := os.WriteFile(script, []byte(waitAgentScript), 0o644); err != nil {
		t.Fatal(err)
	}
	q := &nodes.ReviewQueue{Dir: filepath.Join(dir, "reviews")}
	done := nodetest.NewHarness(t, repo).RunAsync(t, strings.NewReplacer("SCRIPT", script, "REVIEWS", q.Dir).Replace(waitAgentFlow))

	first := waitEntry(t, q, func(e nodes.ReviewEntry) bool { return e.Waiting && e.Status == nodes.StatusPending })
	if first.Title != "Fixed the sign in Add." || first.WaitUntil.Sub(first.WaitSince) != 10*time.Minute {
		t.Fatalf("first entry: %+v", first)
	}
	const note = "Document what Add(0, 0) returns."
	if _, err := q.Reject(context.Background(), first.ID, note, "alice"); err != nil {
		t.Fatal(err)
	}
	second := waitEntry(t, q, func(e nodes.ReviewEntry) bool {
		return e.Waiting && e.Status == nodes.StatusPending && len(e.History) == 1
	})
	h := second.History[0]
	if second.ID != first.ID || second.Commit == first.Commit || h.Commit != first.Commit || h.Title != first.Title ||
		h.Status != nodes.StatusRejected || h.Note != note || h.DecidedBy != "alice" || second.Title != "Documented Add(0, 0) as the reviewer asked." {
		t.Fatalf("updated entry: %+v", second)
	}
	if d, _ := q.Get(second.ID); !strings.Contains(d.Diff, "Add(0, 0) is 0") || !strings.Contains(d.Body, second.Commit[:12]) {
		t.Fatalf("the entry's diff or summary is still the first commit's:\n%s\n%s", d.Diff, d.Body)
	}
	if _, err := q.Approve(context.Background(), second.ID, "", "bob"); err != nil {
		t.Fatal(err)
	}
	sum := <-done
	if sum.Status != runtime.StatusSucceeded {
		t.Fatalf("run %s: %s", sum.Status, sum.Reason)
	}
	starts := events(t, sum.Dir, "implement", runtime.EvNodeStarted)
	if len(starts) != 2 || !strings.Contains(starts[1].Feedback, note) || !strings.Contains(starts[1].Feedback, "alice") {
		t.Fatalf("the reviewer's note did not reach the agent's retry: %+v", starts)
	}
	fin := events(t, sum.Dir, "review", runtime.EvNodeFinished)
	if len(fin) != 2 || fin[0].Outcome != runtime.OutcomeFail || fin[0].Outputs["decision"] != "changes_requested" ||
		fin[1].Outcome != runtime.OutcomePass || fin[1].Outputs["decision"] != "approved" {
		t.Fatalf("review verdicts: %+v", fin)
	}
	if e := waitEntry(t, q, func(nodes.ReviewEntry) bool { return true }); e.Waiting {
		t.Fatal("the entry still says a run waits after the run ended")
	}
}

const waitShellFlow = `version: 1
name: wait
start: fix
nodes:
  fix: {type: shell, run: "sed -i 's/a - b/a + b/' calc.go", next: test}
  test: {type: test, run: go test -json ./..., on_pass: commit, on_fail: stuck}
  commit: {type: git_commit, branch: fix/add, message: "fix: Add adds", next: review}
  review: {type: review, dir: REVIEWS, wait: WAIT, on_pass: done, on_fail: no}
  done: {type: succeed}
  no: {type: fail}
  stuck: {type: handoff}
`

// TestReviewWaitDecisions: approving passes the waiting node; rejecting
// without a note still fails it (changes requested); no decision within
// the wait fails it with decision timed_out and leaves the entry pending
// for a later decision.
func TestReviewWaitDecisions(t *testing.T) {
	defer review.FastReviewPolling(nil)()
	for _, tc := range []struct {
		name, wait, decide string
		want               runtime.Status
		decision           string
	}{
		{"approve", "10m", "approve", runtime.StatusSucceeded, "approved"},
		{"reject", "10m", "reject", runtime.StatusFailed, "changes_requested"},
		{"expire", "1s", "", runtime.StatusFailed, "timed_out"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q := &nodes.ReviewQueue{Dir: t.TempDir()}
			src := strings.NewReplacer("REVIEWS", q.Dir, "WAIT", tc.wait).Replace(waitShellFlow)
			done := nodetest.NewHarness(t, nodetest.SeedRepo(t)).RunAsync(t, src)
			e := waitEntry(t, q, func(e nodes.ReviewEntry) bool { return e.Waiting })
			var err error
			switch tc.decide {
			case "approve":
				_, err = q.Approve(context.Background(), e.ID, "", "alice")
			case "reject":
				_, err = q.Reject(context.Background(), e.ID, "", "alice")
			}
			if err != nil {
				t.Fatal(err)
			}
			sum := <-done
			fin := events(t, sum.Dir, "review", runtime.EvNodeFinished)
			if sum.Status != tc.want || len(fin) != 1 || fin[0].Outputs["decision"] != tc.decision || fin[0].Outputs["id"] != e.ID {
				t.Fatalf("run %s (%s), review %+v", sum.Status, sum.Reason, fin)
			}
			e = waitEntry(t, q, func(nodes.ReviewEntry) bool { return true })
			if e.Waiting || (tc.decide == "" && e.Status != nodes.StatusPending) {
				t.Fatalf("entry after the run: %+v", e)
			}
		})
	}
}
