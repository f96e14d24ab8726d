package runtimetest

import (
	"fmt"
	"strings"

	"github.com/sandgate/sandgate/runtime"
)

// verdictKinds are the ways a run ends by what its nodes decided
// (runtime.Summary.Kind): a terminal node an edge led to, a retry
// edge's bound, or a node that asked for a person.
var verdictKinds = map[string]bool{"succeed": true, "fail": true, "handoff": true, "edge": true, "node": true}

// EndedByVerdict returns an error unless the finished run ended by what
// its nodes decided: a terminal node an edge led to (succeed, fail,
// handoff), a retry edge's bound, or a node that asked for a person.
//
// An attack test that asks only "did the run fail to promote" also passes
// when the harness broke before judging anything, so it should ask this
// too. The error names the first of:
//   - a node attempt that broke: its Run returned an error or panicked (a
//     judge box that did not start, a command whose context ran out, a
//     service that was down), even when a retry recovered from it;
//   - a node stopped by its timeout (the runtime fails such an attempt
//     rather than letting it decide, and records it: AttemptInfo.TimedOut);
//   - a run that ended by no verdict: a node that broke for good, an
//     outcome no edge took, a stuck graph, a cancel, a lost workspace, a
//     budget's end (time, tokens, cost, node runs);
//   - a run that has not finished.
//
// A test whose node breaks on purpose checks the break itself instead.
func EndedByVerdict(sum *runtime.Summary) error {
	for _, a := range sum.Attempts {
		if a.Canceled {
			continue // the scheduler stopped it: a retry loop, the run's end
		}
		if err := Decided(a); err != nil {
			return err
		}
	}
	if sum.Status == runtime.StatusRunning {
		return fmt.Errorf("the run has not finished")
	}
	if !verdictKinds[sum.Kind] {
		return fmt.Errorf("the run ended by no node's verdict (%s, %s): %s", sum.Status, sum.Kind, firstLines(sum.Reason, 3))
	}
	return nil
}

// Decided returns an error unless the node attempt a ended by its node's
// own outcome (pass, fail or handoff): it broke (an error or a panic) or
// the runtime stopped it at its timeout (a.TimedOut; a node's own feedback
// that reads like a timeout is still its verdict). A canceled attempt that never
// finished has decided nothing either.
func Decided(a runtime.AttemptInfo) error {
	switch {
	case a.Error != "":
		return fmt.Errorf("node %s (attempt %d) broke: %s", a.Node, a.Attempt, firstLines(a.Error, 3))
	case a.TimedOut:
		return fmt.Errorf("node %s (attempt %d) was stopped by its timeout: %s", a.Node, a.Attempt, firstLines(a.Feedback, 1))
	case a.Canceled && a.Outcome == "":
		return fmt.Errorf("node %s (attempt %d) was canceled before it decided", a.Node, a.Attempt)
	case a.Outcome == "":
		return fmt.Errorf("node %s (attempt %d) has not finished", a.Node, a.Attempt)
	}
	return nil
}

// firstLines is the first n lines of s: a panic's error holds its stack.
func firstLines(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	if len(lines) > n {
		lines = append(lines[:n], "…")
	}
	return strings.Join(lines, "\n")
}
