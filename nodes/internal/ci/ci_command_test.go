package ci_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sandgate/sandgate/nodes/internal/nodetest"
	"github.com/sandgate/sandgate/runtime"
)

// ciCommand fixes the bug (FIX), passes the local gates (cap, a
// diff_cap, then the test gate, or straight to the commit when GATED is
// commit: CI is then the only one that runs the change), commits, pushes
// to a bare remote and runs clean-checkout CI (CIRUN) on the pushed
// commit.
const ciCommand = `version: 1
name: ci-command
start: fix
nodes:
  fix: {type: shell, run: "FIX", next: cap}
  cap: {type: diff_cap, max_lines: 50, on_pass: GATED, on_fail: stuck}
  test: {type: test, run: go test -json ./..., on_pass: commit, on_fail: stuck}
  commit: {type: git_commit, branch: fix/add, message: "fix: Add adds", next: push}
  push: {type: git_push, remote: REMOTE, next: ci}
  ci: {type: ci, provider: command, run: CIRUN, on_pass: done, on_fail: failed}
  done: {type: succeed}
  failed: {type: handoff}
  stuck: {type: handoff}
`

// goldenTest passes only where /tmp/golden.txt exists: the run's box
// keeps /tmp for the whole run, but the file is no part of the commit.
const goldenTest = `package calc

import (
	"os"
	"testing"
)

func TestGolden(t *testing.T) {
	b, err := os.ReadFile("/tmp/golden.txt")
	if err != nil || string(b) != "5\n" {
		t.Fatalf("golden: %v", err)
	}
}
`

// leaning fixes the bug and adds a test that leans on a file outside the
// commit, left in the run's /tmp.
const leaning = fix + " && printf '5\\n' > /tmp/golden.txt && cat > golden_test.go <<'EOF'\n" + goldenTest + "EOF"

const fix = "sed -i 's/a - b/a + b/' calc.go"

// ciSource is ciCommand with its blanks filled; gated is where cap goes
// on a pass, test or commit (then without the test gate, which would be
// unreachable).
func ciSource(bare, gated, fix, run string) string {
	src := strings.NewReplacer("REMOTE", bare, "GATED", gated, "CIRUN", run, `"FIX"`, fmt.Sprintf("%q", fix)).Replace(ciCommand)
	if gated == "test" {
		return src
	}
	var kept []string
	for _, l := range strings.Split(src, "\n") {
		if !strings.HasPrefix(l, "  test:") {
			kept = append(kept, l)
		}
	}
	return strings.Join(kept, "\n")
}

// TestCICleanCheckout: CI in a fresh box built from the pushed commit
// alone fails a change whose test leans on a file outside the commit,
// with the failing test in the feedback; a commit that stands on its own
// passes the same CI. The leaning change passes its one local gate,
// diff_cap, which reads the change and runs nothing: the run's test gate
// would stop it before the commit (it judges in a box of its own,
// TestTestGateLeftFile), and git_commit commits nothing no gate judged.
func TestCICleanCheckout(t *testing.T) {
	cases := []struct {
		name, fix, gated, run string
		pass                  bool
		want                  []string
	}{
		{"go test on a commit missing a file", leaning, "commit", "go test -json ./...", false,
			[]string{"TestGolden", "golden: open /tmp/golden.txt: no such file", "clean checkout of the pushed commit"}},
		{"a script on a commit missing a file", leaning, "commit", `"test -f /tmp/golden.txt || { echo missing golden.txt; exit 3; }"`, false,
			[]string{"exited with 3", "missing golden.txt"}},
		{"a commit that stands on its own", fix, "test", "go test -json ./...", true, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			repo := nodetest.SeedRepo(t)
			bare := filepath.Join(t.TempDir(), "remote.git")
			nodetest.Run(t, "", "git", "init", "-q", "--bare", bare)
			src := ciSource(bare, c.gated, c.fix, c.run)
			sum := nodetest.NewHarness(t, repo).Run(t, src, nil)
			var ev *runtime.Event
			for _, e := range nodetest.ReadEvents(t, sum.Dir) {
				if e.Type == runtime.EvNodeFinished && (e.Node == "cap" || e.Node == "test") && e.Outcome != runtime.OutcomePass {
					t.Fatalf("the local gate %s did not pass: %s %q", e.Node, e.Outcome, e.Feedback)
				}
				if e.Type == runtime.EvNodeFinished && e.Node == "ci" {
					ev = &e
				}
			}
			if ev == nil {
				t.Fatalf("ci never finished: run %s %q", sum.Status, sum.Reason)
			}
			t.Logf("ci: %s %v\n%s", ev.Outcome, ev.Outputs, ev.Feedback)
			pushed := nodetest.Run(t, bare, "git", "rev-parse", "fix/add")
			if ev.Outputs["commit"] != pushed {
				t.Fatalf("judged %v, pushed %s", ev.Outputs["commit"], pushed)
			}
			if c.pass {
				if ev.Outcome != runtime.OutcomePass || ev.Outputs["state"] != "success" || sum.Status != runtime.StatusSucceeded {
					t.Fatalf("a commit that stands on its own: %s %v, run %s", ev.Outcome, ev.Outputs, sum.Status)
				}
				return
			}
			if ev.Outcome != runtime.OutcomeFail || ev.Outputs["state"] != "failure" {
				t.Fatalf("a commit missing a file passed clean-checkout CI: %s %v", ev.Outcome, ev.Outputs)
			}
			for _, w := range c.want {
				if !strings.Contains(ev.Feedback, w) {
					t.Errorf("feedback lacks %q", w)
				}
			}
		})
	}
}

// vetLoop: the local test gate runs go test, CI runs go vet, which checks
// what go test's vet subset does not (self-assignment). The fix node
// stands in for the agent: with no feedback it fixes Add and leaves a
// self-assignment behind; it removes that only when the feedback it is
// given names it, so a second commit passes only if CI's failure reached
// it. CI's failure goes back to fix once.
const vetLoop = `version: 1
name: ci-loop
start: fix
nodes:
  fix:
    type: shell
    run: |
      if [ -e /tmp/fixed-once ]; then sed -i 's/a = a; //' calc.go
      else sed -i 's/{ return a - b }/{ a = a; return a + b }/' calc.go && touch /tmp/fixed-once; fi
    next: test
  test: {type: test, run: go test -json ./..., on_pass: commit, on_fail: stuck}
  commit: {type: git_commit, branch: fix/add, message: "fix: Add adds (attempt ${{ attempts.commit }})", next: push}
  push: {type: git_push, remote: REMOTE, next: ci}
  ci: {type: ci, provider: command, run: go vet ./..., on_pass: done, on_fail: {to: fix, max: 1}}
  done: {type: succeed}
  stuck: {type: handoff}
`

// TestCIFailureLoop: the local test gate passes the first commit, CI
// fails it in a clean checkout, the failure is handed to the node that
// makes the change, and its second change is a new commit on top of the
// first, pushed to the same branch by fast-forward, which CI passes.
func TestCIFailureLoop(t *testing.T) {
	repo := nodetest.SeedRepo(t)
	bare := filepath.Join(t.TempDir(), "remote.git")
	nodetest.Run(t, "", "git", "init", "-q", "--bare", bare)
	sum := nodetest.NewHarness(t, repo).Run(t, strings.ReplaceAll(vetLoop, "REMOTE", bare), nil)
	var test, ci, fix []runtime.Event
	for _, e := range nodetest.ReadEvents(t, sum.Dir) {
		if e.Type == runtime.EvNodeStarted && e.Node == "fix" {
			fix = append(fix, e)
		}
		if e.Type == runtime.EvNodeFinished && e.Node == "test" {
			test = append(test, e)
		}
		if e.Type == runtime.EvNodeFinished && e.Node == "ci" {
			ci = append(ci, e)
		}
	}
	if len(test) != 2 || test[0].Outcome != runtime.OutcomePass || test[1].Outcome != runtime.OutcomePass {
		t.Fatalf("the local test gate: %+v (run %s %q)", test, sum.Status, sum.Reason)
	}
	if len(ci) != 2 || ci[0].Outcome != runtime.OutcomeFail || ci[1].Outcome != runtime.OutcomePass || sum.Status != runtime.StatusSucceeded {
		t.Fatalf("ci: %+v (run %s %q)", ci, sum.Status, sum.Reason)
	}
	if !strings.Contains(ci[0].Feedback, "self-assignment of a") || !strings.Contains(ci[0].Feedback, "clean checkout of the pushed commit") {
		t.Fatalf("CI's feedback: %q", ci[0].Feedback)
	}
	if len(fix) != 2 || !strings.Contains(fix[1].Feedback, "self-assignment of a") {
		t.Fatalf("CI's failure was not handed to fix: %+v", fix)
	}
	first, second := ci[0].Outputs["commit"].(string), ci[1].Outputs["commit"].(string)
	if first == second {
		t.Fatalf("CI judged %s twice", first)
	}
	if got := nodetest.Run(t, bare, "git", "rev-parse", "fix/add"); got != second {
		t.Fatalf("the remote's fix/add is %s, want the second commit %s", got, second)
	}
	if parent := nodetest.Run(t, bare, "git", "rev-parse", second+"^"); parent != first {
		t.Fatalf("the second commit's parent is %s, want the first %s: the push did not fast-forward", parent, first)
	}
	if body := nodetest.Run(t, bare, "git", "show", second+":calc.go"); strings.Contains(body, "a = a") || !strings.Contains(body, "a + b") {
		t.Fatalf("the pushed calc.go:\n%s", body)
	}
}

// TestTestGateLeftFile: the run's test gate fails the change whose test
// leans on a file the agent's commands left in /tmp: it judges the
// candidate in a box of its own, where no such file exists, so nothing is
// committed or pushed and CI never runs.
func TestTestGateLeftFile(t *testing.T) {
	repo := nodetest.SeedRepo(t)
	bare := filepath.Join(t.TempDir(), "remote.git")
	nodetest.Run(t, "", "git", "init", "-q", "--bare", bare)
	sum := nodetest.NewHarness(t, repo).Run(t, ciSource(bare, "test", leaning, "go test -json ./..."), nil)
	var test *runtime.Event
	for _, e := range nodetest.ReadEvents(t, sum.Dir) {
		if e.Type == runtime.EvNodeFinished && (e.Node == "commit" || e.Node == "ci") {
			t.Fatalf("%s ran after a test gate on a change leaning on /tmp: %s", e.Node, e.Outcome)
		}
		if e.Type == runtime.EvNodeFinished && e.Node == "test" {
			test = &e
		}
	}
	if test == nil || test.Outcome != runtime.OutcomeFail || !strings.Contains(test.Feedback, "TestGolden") {
		t.Fatalf("the test gate did not fail TestGolden: %+v (run %s %q)", test, sum.Status, sum.Reason)
	}
}

// TestCIJudgesOnlyThePushedCommit: ci refuses, handing the run to a
// person, whenever what CI would judge is not the change as it is: no
// push yet, a newer commit not pushed, or edits after the push. Each of
// these would otherwise judge an older commit.
func TestCIJudgesOnlyThePushedCommit(t *testing.T) {
	const head = `version: 1
name: ci-order
start: fix
nodes:
  fix: {type: shell, run: "sed -i 's/a - b/a + b/' calc.go", next: test}
  test: {type: test, run: go test -json ./..., on_pass: commit, on_fail: stuck}
  commit: {type: git_commit, branch: fix/add, message: "fix", next: NEXT}
  ci: {type: ci, provider: command, run: go test -json ./..., on_pass: done, on_fail: done}
  done: {type: succeed}
  stuck: {type: handoff}
`
	cases := []struct{ name, next, extra, want string }{
		{"nothing pushed", "ci", "", "nothing was pushed yet"},
		{"edited after the push", "push", "  push: {type: git_push, remote: REMOTE, next: edit}\n  edit: {type: shell, run: \"echo more >> calc.go\", next: ci}\n",
			"the workspace changed after commit"},
		// The second pass through commit makes a new commit and skips the
		// push; test is the only gate, so both commits are verified.
		{"a newer commit not pushed", "push", "  push: {type: git_push, remote: REMOTE, next: edit}\n  edit: {type: shell, run: \"echo '// more' >> calc.go\", next: {to: test, max: 1}}\n",
			"was not pushed"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			repo := nodetest.SeedRepo(t)
			bare := filepath.Join(t.TempDir(), "remote.git")
			nodetest.Run(t, "", "git", "init", "-q", "--bare", bare)
			src := strings.ReplaceAll(strings.Replace(head, "NEXT", c.next, 1)+c.extra, "REMOTE", bare)
			if c.name == "a newer commit not pushed" {
				src = strings.Replace(src, `branch: fix/add, message: "fix", next: push}`,
					`branch: "fix/add-${{ attempts.commit }}", message: "fix", edges: [{to: push, when: "attempts.commit == 1"}, {to: ci}]}`, 1)
			}
			sum := nodetest.NewHarness(t, repo).Run(t, src, nil)
			var ev *runtime.Event
			for _, e := range nodetest.ReadEvents(t, sum.Dir) {
				if e.Type == runtime.EvNodeFinished && e.Node == "ci" {
					ev = &e
				}
			}
			if ev == nil || ev.Outcome != runtime.OutcomeHandoff || !strings.Contains(ev.Feedback, c.want) || sum.Status == runtime.StatusSucceeded {
				t.Fatalf("run %s %q; ci %+v", sum.Status, sum.Reason, ev)
			}
		})
	}
}

// TestCIBaseCommit: with commit: base, clean-checkout CI judges the
// commit the run started from, which it never pushed, and the failure
// reaches the next node. Once the run has committed, a verdict on the
// base would be stale: the same node refuses and the run goes to a
// person.
func TestCIBaseCommit(t *testing.T) {
	const src = `version: 1
name: ci-base
start: before
nodes:
  before: {type: ci, provider: command, commit: base, branch: main, run: go test -json ./..., on_pass: done, on_fail: fix}
  fix: {type: shell, run: "sed -i 's/a - b/a + b/' calc.go", next: test}
  test: {type: test, run: go test -json ./..., on_pass: commit, on_fail: stuck}
  commit: {type: git_commit, branch: main, message: "fix", next: {to: before, max: 1}}
  done: {type: succeed}
  stuck: {type: handoff}
`
	repo := nodetest.SeedRepo(t)
	base := nodetest.Run(t, repo, "git", "rev-parse", "HEAD")
	sum := nodetest.NewHarness(t, repo).Run(t, src, nil)
	var evs []runtime.Event
	for _, e := range nodetest.ReadEvents(t, sum.Dir) {
		if e.Type == runtime.EvNodeFinished && e.Node == "before" {
			evs = append(evs, e)
		}
	}
	if len(evs) != 2 || sum.Status == runtime.StatusSucceeded {
		t.Fatalf("run %s %q; before: %+v", sum.Status, sum.Reason, evs)
	}
	first, again := evs[0], evs[1]
	if first.Outcome != runtime.OutcomeFail || first.Outputs["commit"] != base || !strings.Contains(first.Feedback, "clean checkout of the run's base commit") {
		t.Fatalf("CI on the base: %s %v %q", first.Outcome, first.Outputs, first.Feedback)
	}
	if again.Outcome != runtime.OutcomeHandoff || !strings.Contains(again.Feedback, "would be stale") {
		t.Fatalf("CI on the base after a commit: %s %q", again.Outcome, again.Feedback)
	}
}
