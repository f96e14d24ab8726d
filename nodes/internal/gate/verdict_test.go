package gate_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sandgate/sandgate/blueprint"
	"github.com/sandgate/sandgate/nodes/internal/nodetest"
	"github.com/sandgate/sandgate/runtime"
)

// A shell node running beside the test gate swaps the fix in and, 3 s
// later, the bug back, in one command; the gate starts 1 s in, while
// the swapper sleeps. The gate must judge what the workspace holds for
// its whole run, so the bug is never committed: it waits for the
// swapper's command to end before it captures the tree
// (workspace/hold.go) and judges the bug. Without that lock it captures
// the fix and passes (the commit would then refuse the bug put back, so
// the test asks for the gate's fail, not just that nothing is promoted).
func TestParallelWriterCannotSwapDuringGate(t *testing.T) {
	repo := nodetest.SeedRepo(t)
	gateCmd := `go test -json ./...`
	swapCmd := `sed -i 's/a - b/a + b/' calc.go; sleep 3; sed -i 's/a + b/a - b/' calc.go`
	src := `version: 1
name: swap
start: fan
nodes:
  fan: {type: shell, run: "true", next: [swap, wait]}
  wait: {type: shell, run: "sleep 1", next: test}
  swap: {type: shell, run: ` + nodetest.Quote(swapCmd) + `, next: commit}
  test: {type: test, run: ` + nodetest.Quote(gateCmd) + `, on_pass: commit, on_fail: stuck}
  commit: {type: git_commit, needs: [swap, test], next: done}
  done: {type: succeed}
  stuck: {type: handoff, reason: a gate failed}
`
	sum := nodetest.NewHarness(t, repo).Run(t, src, nil)
	nodetest.AssertNothingPromoted(t, sum)
	if a := nodetest.LastAttempt(sum, "test"); a.Outcome != runtime.OutcomeFail {
		t.Fatalf("the test gate did not fail on the buggy code: %s %s", a.Outcome, a.Feedback)
	}
}

// Two lint nodes judge the same change; the failing one must block
// promotion even when the passing one finishes last.
func TestTwoGatesOfOneKindKeepTheirOwnVerdicts(t *testing.T) {
	repo := nodetest.SeedRepo(t)
	src := `version: 1
name: two-lints
start: fix
nodes:
  fix: {type: shell, run: "sed -i 's/a - b/a + b/' calc.go", next: [strict, lenient]}
  strict: {type: lint, run: ["echo 'calc.go:4:1: exported function is too clever'; exit 1"], next: commit}
  lenient: {type: lint, run: ["sleep 1; true"], next: commit}
  commit: {type: git_commit, needs: [strict, lenient], next: done}
  done: {type: succeed}
`
	sum := nodetest.NewHarness(t, repo).Run(t, src, nil)
	nodetest.AssertNothingPromoted(t, sum)
	if sum.Status != runtime.StatusHandedOff || !strings.Contains(sum.Reason, "gate strict failed") {
		t.Fatalf("want a hand-off naming strict, got %s: %s", sum.Status, sum.Reason)
	}
	v := nodetest.ReadVerify(t, sum.Dir)
	if v["lint"] != "fail" || v["pass"] != false {
		t.Fatalf("verify.json summary: %v", v)
	}
	gates := v["gates"].(map[string]any)
	if gates["strict"].(map[string]any)["pass"] != false || gates["lenient"].(map[string]any)["pass"] != true {
		t.Fatalf("verify.json per node: %v", gates)
	}
}

// A gate that never ran on the change blocks promotion by name.
func TestGateThatNeverRanBlocksPromotion(t *testing.T) {
	repo := nodetest.SeedRepo(t)
	src := `version: 1
name: skipped
start: fix
nodes:
  fix: {type: shell, run: "sed -i 's/a - b/a + b/' calc.go", next: cap}
  cap:
    type: diff_cap
    max_lines: 10
    edges:
      - {to: commit, when: "outcome == 'pass'"}
      - {to: lint}
  lint: {type: lint, run: ["true"], next: commit}
  commit: {type: git_commit, next: done}
  done: {type: succeed}
`
	sum := nodetest.NewHarness(t, repo).Run(t, src, nil)
	nodetest.AssertNothingPromoted(t, sum)
	if !strings.Contains(sum.Reason, "gate lint has not judged this change") {
		t.Fatalf("want the hand-off to name lint, got %s: %s", sum.Status, sum.Reason)
	}
}

// The gate's own command writes in the workspace: once swapping the fix
// in for the test and the bug back after (the content is unchanged at the
// end), once leaving an edit behind. Neither may be promoted.
func TestGateOwnWritesAreNotPromoted(t *testing.T) {
	repo := nodetest.SeedRepo(t)
	cases := []struct{ name, prep, cmd string }{
		{"swap and restore", "true", `sed -i 's/a - b/a + b/' calc.go && go test -json ./...; sed -i 's/a + b/a - b/' calc.go`},
		{"edit left behind", "sed -i 's/a - b/a + b/' calc.go", `go test -json ./... && echo '// touched by the gate' >> calc.go`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src := `version: 1
name: own-writes
start: prep
nodes:
  prep: {type: shell, run: ` + nodetest.Quote(c.prep) + `, next: test}
  test: {type: test, run: ` + nodetest.Quote(c.cmd) + `, next: commit}
  commit: {type: git_commit, next: done}
  done: {type: succeed}
`
			sum := nodetest.NewHarness(t, repo).Run(t, src, nil)
			nodetest.AssertNothingPromoted(t, sum)
			a := nodetest.LastAttempt(sum, "test")
			if a.Outcome != runtime.OutcomeFail || !strings.Contains(a.Feedback, "the workspace changed while the gate ran: ") || !strings.Contains(a.Feedback, "calc.go") {
				t.Fatalf("want the gate to fail naming calc.go, got %s:\n%s", a.Outcome, a.Feedback)
			}
		})
	}
}

// hiddenDir writes held-out tests whose init copies its package directory
// to /tmp and the home directory, where a later command would find it.
func hiddenDir(t *testing.T, extra map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{"calc_hidden_test.go": `package calc

import (
	"os"
	"os/exec"
	"testing"
)

func init() {
	exec.Command("sh", "-c", "mkdir -p /tmp/stolen $HOME/stolen && cp -r . /tmp/stolen/; cp -r . $HOME/stolen/; touch /tmp/stolen/ran $HOME/stolen/ran").Run()
}

// The held-out sources are gone before any test binary runs (the
// canary's second phase), so the copy finds none; the marker proves the
// copy ran with everything a test binary may do.
func TestHiddenCopied(t *testing.T) {
	for _, p := range []string{"/tmp/stolen/ran", os.Getenv("HOME") + "/stolen/ran"} {
		if _, err := os.Stat(p); err != nil {
			t.Fatal(err)
		}
	}
}

func TestHiddenXyzzyDoubles(t *testing.T) {
	if Add(2, 2) != 4 {
		t.Fatal("SOURCE-MARKER-plugh: Add(2, 2) is wrong")
	}
}
`}
	for k, v := range extra {
		files[k] = v
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func hiddenBlueprint(dir, feedback string) string {
	return `version: 1
name: hidden
start: held
nodes:
  held:
    type: test
    run: go test -json ./...
    hidden: ` + nodetest.Quote(dir) + feedback + `
    on_pass: snoop
    on_fail: snoop
  snoop:
    type: shell
    run: "find /tmp $HOME /work -path $HOME/.cache/go-build -prune -o -path $HOME/go/pkg/mod -prune -o -type f -print0 2>/dev/null | xargs -0r grep -l -e Xyz''zy -e plu''gh; ls -a /tmp $HOME /work; true"
    next: done
  done: {type: succeed}
`
}

// Held-out tests run where nothing later can see them: code under test
// copies them to /tmp and home, a later shell node looks, and neither the
// agent's feedback nor the run's records hold their names or source.
// The look leaves out the build and module caches mounted under home:
// they are the host's (tens of GB on a busy machine; reading them took
// longer than the run may), and the judge box's copy-on-write layers over
// them are thrown away with it (the cache attacks in cmd/sandgate's
// judge_attack_test.go show nothing written there reaches a later box).
func TestHiddenTestsStayHidden(t *testing.T) {
	repo := nodetest.SeedRepo(t)
	sum := nodetest.NewHarness(t, repo).Run(t, hiddenBlueprint(hiddenDir(t, nil), ""), nil)
	if sum.Status != runtime.StatusSucceeded {
		t.Fatalf("run %s: %s", sum.Status, sum.Reason)
	}
	held := nodetest.LastAttempt(sum, "held")
	// TestAdd and TestHiddenXyzzyDoubles fail on the bug; TestAddZero and
	// TestHiddenCopied pass, which proves the copy to /tmp and home ran.
	if held.Outcome != runtime.OutcomeFail || held.Outputs["passed"] != 2.0 || held.Outputs["failed"] != 2.0 {
		t.Fatalf("held-out run: %s %v", held.Outcome, held.Outputs)
	}
	if held.Feedback != "2 held-out tests failed." {
		t.Fatalf("feedback says more than the count: %q", held.Feedback)
	}
	t.Logf("held-out run: %d ms (box start, change copy, go test)", held.DurationMS)
	snoop := nodetest.LastAttempt(sum, "snoop")
	out, _ := snoop.Outputs["output"].(string)
	if strings.Contains(out, "stolen") || strings.Contains(out, "calc_hidden_test.go") || !strings.Contains(out, "go.mod") {
		t.Fatalf("a later node found the held-out tests:\n%s", out)
	}
	assertNotInTree(t, sum.Dir, "Xyzzy", "plugh", "HiddenCopied")
	assertNotInTree(t, filepath.Join(repo), "Xyzzy")
}

func TestHiddenFeedbackNamesWhenOptedIn(t *testing.T) {
	repo := nodetest.SeedRepo(t)
	sum := nodetest.NewHarness(t, repo).Run(t, hiddenBlueprint(hiddenDir(t, nil), "\n    hidden_feedback: names"), nil)
	held := nodetest.LastAttempt(sum, "held")
	if !strings.Contains(held.Feedback, "2 held-out tests failed.") || !strings.Contains(held.Feedback, "TestHiddenXyzzyDoubles") || strings.Contains(held.Feedback, "plugh") {
		t.Fatalf("feedback: %q", held.Feedback)
	}
}

// assertNotInTree fails when any file under dir holds one of the words.
func assertNotInTree(t *testing.T, dir string, words ...string) {
	t.Helper()
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return nil
		}
		for _, w := range words {
			if nodetest.FileHolds(p, w) {
				t.Errorf("%s holds %q", p, w)
			}
		}
		return nil
	})
}

// A held-out file with the path of a repository file would replace it:
// the run is refused before any node runs, naming the path.
func TestHiddenCollisionRefused(t *testing.T) {
	repo := nodetest.SeedRepo(t)
	dir := hiddenDir(t, map[string]string{"calc.go": "package calc\n\nfunc Add(a, b int) int { return a + b }\n"})
	h := nodetest.NewHarness(t, repo)
	bp, err := blueprint.Parse("test.yaml", []byte(hiddenBlueprint(dir, "")), blueprint.WithTypes(h.RT.Registry))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	sum, err := h.RT.Run(ctx, bp, runtime.RunOptions{Workspace: repo})
	msg := ""
	if err != nil {
		msg = err.Error()
	} else {
		msg = sum.Reason
		if len(sum.Attempts) > 0 {
			t.Fatalf("nodes ran: %v", sum.Attempts)
		}
	}
	if !strings.Contains(msg, "collides with the repository's calc.go") || !strings.Contains(msg, filepath.Join(dir, "calc.go")) {
		t.Fatalf("want a refusal naming calc.go, got %v / %q", err, msg)
	}
}
