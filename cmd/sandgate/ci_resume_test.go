package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/sandgate/sandgate/internal/wait"

	"github.com/sandgate/sandgate/internal/ghfake"
	"github.com/sandgate/sandgate/runtime"
)

// TestResumeKeepsWaitingForCI kills a real CLI process while its ci node
// waits for GitHub, then resumes the run: the ci node runs again from the
// top, polls the same pushed commit (and nothing else), and passes once
// CI finishes. Nothing before it runs again.
func TestResumeKeepsWaitingForCI(t *testing.T) {
	const tok = "ghs_resume-double-token"
	repo, runs := gitRepo(t), t.TempDir()
	bare := filepath.Join(t.TempDir(), "remote.git")
	if out, err := exec.Command("git", "init", "-q", "--bare", bare).CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	gh := ghfake.New(tok, "octo/calc")
	defer gh.Close()
	var finished atomic.Bool
	gh.Set(func(s *ghfake.Server) {
		s.Required = []string{"build"}
		s.Script = func(string, int) ghfake.Answer {
			build := ghfake.Run{ID: 7, Name: "build", Status: "in_progress"}
			if finished.Load() {
				build.Status, build.Conclusion = "completed", "success"
			}
			return ghfake.Answer{Runs: []ghfake.Run{build}}
		}
	})
	// The gate before the commit is a diff_cap: what is resumed is ci,
	// and a test gate would add a judge box running go test.
	bp := writeBlueprint(t, strings.NewReplacer("REMOTE", bare, "API", gh.API.URL).Replace(`version: 1
name: ci-crash
start: fix
nodes:
  fix: {type: shell, run: "sed -i 's/a - b/a + b/' calc.go", next: cap}
  cap: {type: diff_cap, max_lines: 20, on_pass: commit, on_fail: no}
  commit: {type: git_commit, branch: fix/add, message: fixed, next: push}
  push: {type: git_push, remote: REMOTE, next: ci}
  ci: {type: ci, provider: github, repo: octo/calc, base_url: API, token_env: SANDGATE_TEST_CI_TOKEN, poll: 50ms, on_pass: done, on_fail: no}
  done: {type: succeed}
  no: {type: fail}
`))
	cmd := exec.Command(os.Args[0], "run", bp, "--repo", repo, "--runs-dir", runs, "--allow-endpoint", gh.API.URL)
	cmd.Env = append(os.Environ(), "SANDGATE_TEST_CLI=1", "SANDGATE_TEST_CI_TOKEN="+tok)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sha := waitForPolls(t, gh, cmd)
	cmd.Process.Kill()
	cmd.Wait()
	dirs, _ := filepath.Glob(filepath.Join(runs, "*", "events.jsonl"))
	if len(dirs) != 1 {
		t.Fatalf("run directories: %v", dirs)
	}
	dir := filepath.Dir(dirs[0])
	// Resumed at once: the killed box's disk may still be attached, and
	// the new box must wait for the old mount to let go (its writes reach
	// the image only then) instead of mounting the image a second time
	// and seeing a workspace without the change, which ci refuses to judge.
	finished.Store(true)
	before := len(gh.Requests())
	t.Setenv("SANDGATE_TEST_CI_TOKEN", tok)
	code, out, errs := runCLI("resume", dir, "--runs-dir", runs, "--allow-endpoint", gh.API.URL)
	if code != exitOK || strings.Contains(out, "✓ push") || strings.Contains(out, "✓ fix") {
		t.Fatalf("resume: exit %d (push and fix must not run again)\n%s\n%s", code, out, errs)
	}
	checkResumedCI(t, gh.Requests()[before:], dir, sha)
}

// checkResumedCI: after the resume, only the pushed commit was polled,
// and the ci node passed judging it.
func checkResumedCI(t *testing.T, after []ghfake.Request, dir, sha string) {
	t.Helper()
	polled := 0
	for _, r := range after {
		if r.SHA != "" && r.SHA != sha {
			t.Errorf("the resumed ci polled %s, not the pushed %s", r.SHA, sha)
		}
		if r.SHA == sha {
			polled++
		}
	}
	evs, err := runtime.ReadJournal(filepath.Join(dir, "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var last runtime.Event
	for _, ev := range evs {
		if ev.Type == runtime.EvNodeFinished && ev.Node == "ci" {
			last = ev
		}
	}
	if polled == 0 || last.Outcome != runtime.OutcomePass || last.Outputs["commit"] != sha {
		t.Fatalf("after resume: %d polls of %s; ci finished %s %v", polled, sha, last.Outcome, last.Outputs)
	}
}

// waitForPolls waits until the child's ci node has polled the pushed
// commit twice (it is waiting, past its first look) and returns the sha.
func waitForPolls(t *testing.T, gh *ghfake.Server, cmd *exec.Cmd) string {
	t.Helper()
	var sha string
	if wait.For(t, func() bool {
		n := 0
		for _, r := range gh.Requests() {
			if strings.HasSuffix(r.Path, "/check-runs") {
				n, sha = n+1, r.SHA
			}
		}
		return n >= 2
	}) {
		return sha
	}
	cmd.Process.Kill()
	cmd.Wait()
	t.Fatal("the ci node never polled")
	return ""
}
