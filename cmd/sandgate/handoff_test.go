package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sandgate/sandgate/internal/gitfixture"
	"github.com/sandgate/sandgate/runtime"
)

// logoBytes is what the scripted agent writes as logo.png: not text (NUL
// bytes, no trailing newline, a byte that is not UTF-8).
var logoBytes = []byte("\x89PNG\r\n\x1a\n\x00\x01\xff")

// handoffGround is what a hand-off test works in: the calc repository,
// a runs directory, a bare remote of the repository, and the scripted
// model's turns (model.yaml).
type handoffGround struct{ work, repo, runs, remote, script string }

func newHandoffGround(t *testing.T, turns string) handoffGround {
	t.Helper()
	g := handoffGround{work: t.TempDir(), repo: gitRepo(t)}
	g.runs, g.remote, g.script = filepath.Join(g.work, "runs"), filepath.Join(g.work, "remote.git"), filepath.Join(g.work, "model.yaml")
	if err := gitfixture.Remote(g.repo, g.remote, ""); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(g.script, []byte(turns), 0o644); err != nil {
		t.Fatal(err)
	}
	return g
}

// takeOver runs cmds (a hand-off's takeover or fetch commands) as the
// person taking the run over would, in a fresh clone of the repository
// in place of the repository, and returns the clone.
func (g handoffGround) takeOver(t *testing.T, cmds []string) string {
	t.Helper()
	clone := filepath.Join(g.work, "clone")
	if _, err := gitfixture.Git(g.work, "clone", "-q", g.repo, clone); err != nil {
		t.Fatal(err)
	}
	for _, c := range cmds {
		c = strings.Replace(c, "git -C "+g.repo+" ", "git -C "+clone+" ", 1)
		if out, err := exec.Command("sh", "-c", c).CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", c, err, out)
		}
	}
	return clone
}

// TestHandoffTakeover runs the shipped fix-failing-test blueprint with a
// scripted agent that adds a binary file and twice fails to fix the bug,
// so the test gate's retry bound hands the run off. `sandgate show`
// prints the task, the outcome and the takeover commands; run in a fresh
// clone of the repository, those commands apply change.patch cleanly and
// yield exactly the agent's change, binary file included.
func TestHandoffTakeover(t *testing.T) {
	g := newHandoffGround(t, `- tool_calls: [{function: {name: run, arguments: {command: "printf '\\211PNG\\015\\012\\032\\012\\000\\001\\377' > logo.png"}}}]
- tool_calls: [{function: {name: edit_file, arguments: {path: calc.go, old: "a - b", new: "a - b + 0"}}}]
- tool_calls: [{function: {name: finish, arguments: {summary: "added a logo and touched Add"}}}]
- tool_calls: [{function: {name: edit_file, arguments: {path: calc.go, old: "a - b + 0", new: "b - a"}}}]
- tool_calls: [{function: {name: finish, arguments: {summary: "swapped the operands"}}}]
`)
	repo, runs, remote := g.repo, g.runs, g.remote
	bp, _ := filepath.Abs(filepath.Join("..", "..", "blueprints", "fix-failing-test.yaml"))
	code, out, errs := runCLI("run", bp, "--repo", repo, "--runs-dir", runs, "--model", "script:"+g.script,
		"--input", "task=fix Add", "--input", "remote="+remote)
	if code != exitHandoff {
		t.Fatalf("exit %d, want a hand-off\n%s\n%s", code, out, errs)
	}
	dirs, _ := filepath.Glob(filepath.Join(runs, "*", "handoff.json"))
	if len(dirs) != 1 {
		t.Fatalf("handoff.json: %v", dirs)
	}
	dir := filepath.Dir(dirs[0])
	code, shown, errs := runCLI("show", dir)
	if code != exitOK {
		t.Fatalf("show: exit %d\n%s", code, errs)
	}
	for _, want := range []string{"- **task**: `fix Add`", "The `test` gate still failed after 2 attempt(s) of the agent `implement`",
		"retry edge test.edges[1] → implement (max 1) exhausted", "git -C " + repo + " apply --index " + filepath.Join(dir, "change.patch")} {
		if !strings.Contains(shown, want) {
			t.Errorf("show lacks %q:\n%s", want, shown)
		}
	}
	var h runtime.Handoff
	if err := json.Unmarshal(must(os.ReadFile(dirs[0])), &h); err != nil {
		t.Fatal(err)
	}
	if len(h.Takeover) != 2 || strings.Join(h.Change.Binary, ",") != "logo.png" {
		t.Fatalf("takeover %q, binary %q", h.Takeover, h.Change.Binary)
	}
	md := string(must(os.ReadFile(filepath.Join(dir, "handoff.md"))))
	for _, want := range []string{"said: `added a logo and touched Add`", "said: `swapped the operands`", "failing: `TestAdd`"} {
		if !strings.Contains(md, want) {
			t.Errorf("handoff.md lacks %q:\n%s", want, md)
		}
	}

	for _, c := range h.Takeover {
		if !strings.Contains(shown, c) {
			t.Errorf("show does not print %q", c)
		}
	}
	clone := g.takeOver(t, h.Takeover)
	if got := string(must(os.ReadFile(filepath.Join(clone, "calc.go")))); !strings.Contains(got, "return b - a") {
		t.Fatalf("calc.go after the takeover:\n%s", got)
	}
	if got := must(os.ReadFile(filepath.Join(clone, "logo.png"))); !bytes.Equal(got, logoBytes) {
		t.Fatalf("logo.png after the takeover: %q, want %q", got, logoBytes)
	}
	if st, _ := exec.Command("git", "-C", clone, "status", "--porcelain").Output(); string(st) != "M  calc.go\nA  logo.png\n" {
		t.Fatalf("git status of the clone after the takeover:\n%s", st)
	}
}

// TestHandoffAfterPush: the change passed its gates and was pushed, then
// a later step failed. The hand-off names the pushed branch, and its
// fetch commands, run in a fresh clone, check out the agent's change.
// Its gate is a diff_cap: what fails is after the push, and a test gate
// would add a judge box running go test.
func TestHandoffAfterPush(t *testing.T) {
	g := newHandoffGround(t, `- tool_calls: [{function: {name: run, arguments: {command: "printf '\\211PNG\\015\\012\\032\\012\\000\\001\\377' > logo.png"}}}]
- tool_calls: [{function: {name: edit_file, arguments: {path: calc.go, old: "a - b", new: "a + b"}}}]
- tool_calls: [{function: {name: finish, arguments: {summary: "fixed Add"}}}]
`)
	repo, runs, remote := g.repo, g.runs, g.remote
	bp := writeBlueprint(t, `version: 1
name: push-then-fail
inputs:
  remote: {required: true}
start: implement
nodes:
  implement: {type: agent, prompt: fix Add, next: cap}
  cap: {type: diff_cap, max_lines: 20, on_pass: commit, on_fail: stuck}
  commit: {type: git_commit, message: fix Add, next: push}
  push: {type: git_push, remote: "${{ inputs.remote }}", next: announce}
  announce: {type: shell, run: "exit 3", on_pass: done, on_fail: stuck}
  done: {type: succeed}
  stuck: {type: handoff, reason: the announcement failed}
`)
	code, out, errs := runCLI("run", bp, "--repo", repo, "--runs-dir", runs, "--model", "script:"+g.script, "--input", "remote="+remote)
	if code != exitHandoff {
		t.Fatalf("exit %d, want a hand-off\n%s\n%s", code, out, errs)
	}
	files, _ := filepath.Glob(filepath.Join(runs, "*", "handoff.json"))
	if len(files) != 1 {
		t.Fatalf("handoff.json: %v", files)
	}
	var h runtime.Handoff
	if err := json.Unmarshal(must(os.ReadFile(files[0])), &h); err != nil {
		t.Fatal(err)
	}
	if len(h.Pushed) != 1 || h.Pushed[0].Remote != remote || len(h.Fetch) != 2 ||
		!strings.Contains(h.Outcome, "hand-off step `stuck` (the announcement failed) after step `announce` (shell) ended fail") {
		t.Fatalf("pushed %+v, fetch %q, outcome %q", h.Pushed, h.Fetch, h.Outcome)
	}
	clone := g.takeOver(t, h.Fetch)
	if got := string(must(os.ReadFile(filepath.Join(clone, "calc.go")))); !strings.Contains(got, "return a + b") {
		t.Fatalf("calc.go on the fetched branch:\n%s", got)
	}
	if got := must(os.ReadFile(filepath.Join(clone, "logo.png"))); !bytes.Equal(got, logoBytes) {
		t.Fatalf("logo.png on the fetched branch: %q", got)
	}
}
