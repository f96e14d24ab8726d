package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sandgate/sandgate/internal/ghfake"
	"github.com/sandgate/sandgate/runtime"
)

const fixCIToken = "ghs_fix-ci-double-token-77a2"

// fixCIRun runs the shipped fix-ci blueprint from a checkout of branch
// fix/add (whose tip fails TestAdd) against a bare remote holding the
// branch and the GitHub double, with the scripted agent. The double's
// build check answers passed(sha) for every commit but the base, which
// fails with TestAdd's log.
func fixCIRun(t *testing.T, gh *ghfake.Server, script string, passed func(sha string) bool) (code int, out, base, remote, dir string, evs []runtime.Event) {
	t.Helper()
	t.Setenv("GITHUB_TOKEN", fixCIToken)
	work := t.TempDir()
	repo, runs := gitRepo(t), filepath.Join(work, "runs")
	gitOut(t, repo, "checkout", "-q", "-b", "fix/add")
	base = gitOut(t, repo, "rev-parse", "HEAD")
	remote = filepath.Join(work, "remote.git")
	bareRemote(t, repo, remote)
	gh.Set(func(s *ghfake.Server) {
		s.Required = []string{"build"}
		s.JobLogs[1001] = "2024-05-04T01:20:50.0000000Z --- FAIL: TestAdd (0.00s)\n2024-05-04T01:20:50.1Z     calc_test.go:7: Add(2, 3) != 5\n##[error]Process completed with exit code 1.\n"
		s.Script = func(sha string, _ int) ghfake.Answer {
			if sha != base && passed(sha) {
				return ghfake.Answer{Runs: []ghfake.Run{{ID: 2002, Name: "build", Status: "completed", Conclusion: "success"}}}
			}
			return ghfake.Answer{Runs: []ghfake.Run{{ID: 1001, Name: "build", Status: "completed", Conclusion: "failure", JobID: 1001}}}
		}
	})
	sp := filepath.Join(work, "model.yaml")
	os.WriteFile(sp, []byte(script), 0o644)
	bp, _ := filepath.Abs(filepath.Join("..", "..", "blueprints", "fix-ci.yaml"))
	code, out, errs := runCLI("run", bp, "--repo", repo, "--runs-dir", runs, "--model", "script:"+sp,
		"--allow-endpoint", gh.API.URL, "--input", "branch=fix/add", "--input", "remote="+remote,
		"--input", "repo=octo/calc", "--input", "api="+gh.API.URL)
	dir, evs = runEvents(t, runs)
	return code, out + errs, base, remote, dir, evs
}

// TestFixCI: the branch's tip fails CI (the double says so for the base
// commit, which the run never pushed); the failing check's log reaches
// the agent, whose fix is committed as a child of the tip and pushed to
// the same branch, a fast-forward; the double reports success for the new
// commit and the run succeeds. Every API request carried the token and
// asked only about those two commits.
func TestFixCI(t *testing.T) {
	gh := ghfake.New(fixCIToken, "octo/calc")
	defer gh.Close()
	code, out, b, remote, dir, evs := fixCIRun(t, gh, `- tool_calls: [{function: {name: edit_file, arguments: {path: calc.go, old: "a - b", new: "a + b"}}}]
- tool_calls: [{function: {name: finish, arguments: {summary: "Add adds"}}}]
`, func(string) bool { return true })
	if code != exitOK {
		t.Fatalf("exit %d\n%s", code, out)
	}
	failing, ci := finished(evs, "failing"), finished(evs, "ci")
	if len(failing) != 1 || failing[0].Outcome != runtime.OutcomeFail || failing[0].Outputs["commit"] != b ||
		!strings.Contains(failing[0].Feedback, "the run's base commit") || !transcriptsHold(t, dir, "Add(2, 3) != 5") {
		t.Fatalf("CI on the base: %+v", failing)
	}
	if len(ci) != 1 || ci[0].Outcome != runtime.OutcomePass {
		t.Fatalf("CI on the push: %+v", ci)
	}
	tip := gitOut(t, remote, "rev-parse", "fix/add")
	if tip != ci[0].Outputs["commit"] || gitOut(t, remote, "rev-parse", "fix/add^") != b {
		t.Fatalf("remote fix/add %s (judged %v), want a child of the base %s", tip, ci[0].Outputs["commit"], b)
	}
	for _, r := range gh.Requests() {
		if !r.Auth || (r.SHA != "" && r.SHA != b && r.SHA != tip) {
			t.Errorf("request %+v", r)
		}
	}
}

// TestFixCIHandsOff: CI keeps failing whatever the agent pushes; after
// the first fix and two retries (on_fail max 2) the run hands off. Each
// attempt was pushed as a child of the previous one on the same branch.
func TestFixCIHandsOff(t *testing.T) {
	gh := ghfake.New(fixCIToken, "octo/calc")
	defer gh.Close()
	code, out, b, remote, _, evs := fixCIRun(t, gh, `- tool_calls: [{function: {name: edit_file, arguments: {path: calc.go, old: "a - b", new: "a + b"}}}]
- tool_calls: [{function: {name: finish, arguments: {summary: "Add adds"}}}]
- tool_calls: [{function: {name: edit_file, arguments: {path: calc.go, old: "a + b", new: "b + a"}}}]
- tool_calls: [{function: {name: finish, arguments: {summary: "operands swapped"}}}]
- tool_calls: [{function: {name: edit_file, arguments: {path: calc.go, old: "b + a", new: "a + b + 0"}}}]
- tool_calls: [{function: {name: finish, arguments: {summary: "plus zero"}}}]
`, func(string) bool { return false })
	if code != exitHandoff {
		t.Fatalf("exit %d, want a hand-off\n%s", code, out)
	}
	ci := finished(evs, "ci")
	if len(ci) != 3 {
		t.Fatalf("ci ran %d times, want 3: %+v", len(ci), ci)
	}
	var judged []string
	for _, e := range ci {
		if e.Outcome != runtime.OutcomeFail {
			t.Fatalf("ci %+v", e)
		}
		judged = append([]string{e.Outputs["commit"].(string)}, judged...)
	}
	if got := gitOut(t, remote, "rev-list", "--first-parent", b+"..fix/add"); got != strings.Join(judged, "\n") {
		t.Fatalf("remote fix/add above the base: %q, want the judged commits newest first %q", got, judged)
	}
}
