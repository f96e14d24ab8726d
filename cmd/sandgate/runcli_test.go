package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sandgate/sandgate/internal/wait"

	"github.com/sandgate/sandgate/internal/gitfixture"
	"github.com/sandgate/sandgate/sandbox"
)

// TestMain lets the test binary act as the sandgate CLI (for the sandbox's
// re-executed helpers, and as a separate process to cancel).
func TestMain(m *testing.M) {
	sandbox.Main()
	if os.Getenv("SANDGATE_TEST_CLI") == "1" {
		os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
	}
	removeCache := privateCache()
	code := m.Run()
	removeDebianLayouts()
	removeCache()
	os.Exit(code)
}

// gitRepo is calc with a bug, one commit on main. Its dates are pinned,
// so every gitRepo is the same commit: what a run keeps per base commit
// in the binary's cache (the snapshot, and the warm step, a box running
// go build and go vet) is made by the first test that runs on it, not by
// each (about a CPU-second a run under -race).
func gitRepo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"go.mod":       "module calc\n\ngo 1.22\n",
		"calc.go":      "package calc\n\nfunc Add(a, b int) int { return a - b }\n",
		"calc_test.go": "package calc\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif Add(2, 3) != 5 {\n\t\tt.Fatal(\"Add(2, 3) != 5\")\n\t}\n}\n",
	}
	if err := gitfixture.SeedPinned(dir, files, "init"); err != nil {
		t.Fatal(err)
	}
	return dir
}

func writeBlueprint(t *testing.T, body string) string {
	p := filepath.Join(t.TempDir(), "bp.yaml")
	os.WriteFile(p, []byte(body), 0o644)
	return p
}

const cliBlueprint = `version: 1
name: cli
start: fix
nodes:
  fix: {type: shell, run: "FIX", next: test}
  test: {type: test, run: go test -json ./..., on_pass: done, on_fail: {to: fix, max: 1}}
  done: {type: succeed}
`

func TestRunShowRunsExitCodes(t *testing.T) {
	repo, runs := gitRepo(t), t.TempDir()
	ok := writeBlueprint(t, strings.Replace(cliBlueprint, "FIX", "sed -i 's/a - b/a + b/' calc.go", 1))
	code, out, errs := runCLI("run", ok, "--repo", repo, "--runs-dir", runs, "--label", "team=infra", "--label=ticket=OPS-7")
	if code != exitOK || !strings.Contains(out, "status: succeeded") || !strings.Contains(out, "✓ test") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	okID := strings.TrimSuffix(strings.Fields(out)[1], ":")
	if code, out, _ := runCLI("show", filepath.Join(runs, okID)); code != exitOK || !strings.Contains(out, "labels: team=infra ticket=OPS-7\n") {
		t.Fatalf("show does not print the run's labels: exit %d\n%s", code, out)
	}
	for _, bad := range []string{"team", "a b=c", "team=two words", "t=\x1b[2J"} {
		if code, _, errs := runCLI("run", ok, "--repo", repo, "--runs-dir", runs, "--label", bad); code != exitUsage || !strings.Contains(errs, "label") {
			t.Errorf("--label %q: exit %d, want usage\n%s", bad, code, errs)
		}
	}
	bad := writeBlueprint(t, strings.Replace(cliBlueprint, "FIX", "true", 1))
	code, out, _ = runCLI("run", bad, "--repo", repo, "--runs-dir", runs)
	if code != exitHandoff || !strings.Contains(out, "handoff.md") {
		t.Fatalf("exhausted retry: exit %d, want 3\n%s", code, out)
	}
	// The handed-off run, by the id it printed: two runs started in the
	// same second sort in random order, so "the last directory" is not it.
	id := strings.TrimSuffix(strings.Fields(out)[1], ":")
	code, out, _ = runCLI("show", filepath.Join(runs, id))
	if code != exitOK || !strings.Contains(out, "test  ") || !strings.Contains(out, "verify.json:") || !strings.Contains(out, "failed=1 passed=0") {
		t.Fatalf("show: exit %d\n%s", code, out)
	}
	code, out, _ = runCLI("runs", "--runs-dir", runs)
	if code != exitOK || strings.Count(out, "\n") != 3 || !strings.Contains(out, "handed_off") || !strings.Contains(out, "succeeded") {
		t.Fatalf("runs: exit %d\n%s", code, out)
	}
	code, _, errs = runCLI("run", ok, "--repo", repo, "--input", "nope=1", "--runs-dir", runs)
	if code != exitUsage || !strings.Contains(errs, `unknown input "nope"`) {
		t.Fatalf("bad input: exit %d %s", code, errs)
	}
}

// TestCancelFromAnotherProcess runs the CLI as a real process and stops it
// with `sandgate cancel` from this one.
func TestCancelFromAnotherProcess(t *testing.T) {
	repo, runs := gitRepo(t), t.TempDir()
	slow := writeBlueprint(t, strings.Replace(cliBlueprint, "FIX", "sleep 987681", 1))
	cmd := exec.Command(os.Args[0], "run", slow, "--repo", repo, "--runs-dir", runs)
	cmd.Env = append(os.Environ(), "SANDGATE_TEST_CLI=1")
	out := &strings.Builder{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// A hang guard, not a timing bound: under load the child's start
	// (its build cache, its box) has taken seconds.
	var dir string
	for deadline := time.Now().Add(2 * time.Minute); dir == "" && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
		if m, _ := filepath.Glob(filepath.Join(runs, "*", "events.jsonl")); len(m) == 1 {
			if b, _ := os.ReadFile(m[0]); strings.Contains(string(b), `"node":"fix"`) {
				dir = filepath.Dir(m[0])
			}
		}
	}
	if dir == "" {
		_ = cmd.Process.Kill()
		_ = cmd.Wait() // out is the child's until it has exited
		t.Fatalf("run never started:\n%s", out)
	}
	if code, _, errs := runCLI("cancel", dir); code != exitOK {
		t.Fatalf("cancel: %d %s", code, errs)
	}
	err := cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != exitCanceled {
		t.Fatalf("want exit 130, got %v\n%s", err, out)
	}
	if b, _ := exec.Command("pgrep", "-f", "sleep 987681").Output(); len(b) > 0 {
		t.Fatalf("the canceled run's process survived: %s", b)
	}
}

// TestIsolationNoneNeedsConsent: a blueprint that opts out of the sandbox
// is refused unless the user also passes --allow-unsandboxed, and a run
// that goes ahead records it.
func TestIsolationNoneNeedsConsent(t *testing.T) {
	repo, runs := gitRepo(t), t.TempDir()
	bp := writeBlueprint(t, "version: 1\nname: open\nsandbox: {isolation: none}\nstart: a\nnodes:\n  a: {type: shell, run: \"true\", next: done}\n  done: {type: succeed}\n")
	code, _, errs := runCLI("run", bp, "--repo", repo, "--runs-dir", runs)
	if code == exitOK || !strings.Contains(errs, "--allow-unsandboxed") {
		t.Fatalf("unconfined run without consent: exit %d %s", code, errs)
	}
	code, out, errs := runCLI("run", bp, "--repo", repo, "--runs-dir", runs, "--allow-unsandboxed", "--json")
	if code != exitOK || !strings.Contains(out, "NONE: commands run unconfined") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
}

// TestResumeSandboxedRunAfterSIGKILL kills a real CLI process in the
// middle of a sandboxed node and resumes the run: the change made before
// the crash survives in the workspace, nothing of the old box lives on,
// and the run finishes as it would have.
func TestResumeSandboxedRunAfterSIGKILL(t *testing.T) {
	repo, runs := gitRepo(t), t.TempDir()
	bp := writeBlueprint(t, `version: 1
name: crashy
start: fix
nodes:
  fix: {type: shell, run: "sed -i 's/a - b/a + b/' calc.go", next: slow}
  slow: {type: shell, run: "sleep 987691; true", timeout: 1m, next: test}
  test: {type: test, run: go test -json ./..., on_pass: commit, on_fail: no}
  commit: {type: git_commit, message: fixed, next: done}
  done: {type: succeed}
  no: {type: fail}
`)
	cmd := exec.Command(os.Args[0], "run", bp, "--repo", repo, "--runs-dir", runs)
	cmd.Env = append(os.Environ(), "SANDGATE_TEST_CLI=1")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var dir string
	if !wait.For(t, func() bool {
		if m, _ := filepath.Glob(filepath.Join(runs, "*", "events.jsonl")); len(m) == 1 {
			if b, _ := os.ReadFile(m[0]); strings.Contains(string(b), `"type":"node_started","node":"slow"`) {
				dir = filepath.Dir(m[0])
			}
		}
		return dir != ""
	}) {
		cmd.Process.Kill()
		t.Fatal("the run never reached the slow node")
	}
	// Kill the harness once the slow command runs in the box (else the
	// check below would pass for want of a process).
	wait.Until(t, "the slow command started in the box", func() bool { return pgrep("sleep 987691") != "" })
	cmd.Process.Kill()
	cmd.Wait()
	// Its box's processes die with it, and the kernel detaches its disk;
	// both take a moment, which a loaded machine stretches.
	if !wait.For(t, func() bool { return pgrep("sleep 987691") == "" }) {
		t.Fatalf("a process of the killed run's box survived: %s", pgrep("sleep 987691"))
	}
	if !wait.For(t, func() bool { return len(loopsHolding(filepath.Join(dir, "box", "disk.img"))) == 0 }) {
		t.Fatalf("the killed run's disk is still attached to %v", loopsHolding(filepath.Join(dir, "box", "disk.img")))
	}
	// Make the resumed slow node quick: the blueprint was saved with the run.
	saved := filepath.Join(dir, "blueprint.yaml")
	b, _ := os.ReadFile(saved)
	os.WriteFile(saved, []byte(strings.Replace(string(b), "sleep 987691; true", "true", 1)), 0o644)
	code, out, errs := runCLI("resume", dir, "--runs-dir", runs)
	if code != exitOK || !strings.Contains(out, "resumed from the journal") || strings.Contains(out, "✓ fix") {
		t.Fatalf("resume: exit %d (fix must not run again)\n%s\n%s", code, out, errs)
	}
	if _, err := os.Stat(filepath.Join(dir, "commit.json")); err != nil {
		t.Fatal("the resumed run did not commit the change made before the crash")
	}
}

// loopsHolding lists loop devices backed by file.
func loopsHolding(file string) []string {
	var held []string
	files, _ := filepath.Glob("/sys/block/loop*/loop/backing_file")
	for _, f := range files {
		if b, _ := os.ReadFile(f); strings.TrimSpace(string(b)) == file {
			held = append(held, f)
		}
	}
	return held
}

// pgrep lists the processes whose command line holds pattern.
func pgrep(pattern string) string {
	b, _ := exec.Command("pgrep", "-f", pattern).Output()
	return strings.TrimSpace(string(b))
}
