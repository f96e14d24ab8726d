package main

import (
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// answerE2E: the agent's first attempt writes step1.txt; the gate wants
// step1.txt AND the fix, which no scripted reply of the first process
// makes. Only an answer can finish the run, and only on the workspace the
// first process left.
const answerE2E = `version: 1
name: answer-e2e
budget: {answers: 1}
start: implement
nodes:
  implement: {type: agent, prompt: fix Add, next: gate}
  gate: {type: shell, run: "test -f step1.txt && grep -q 'a + b' calc.go", on_pass: done, on_fail: {to: implement, max: 1}}
  done: {type: succeed}
`

func modelScript(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "model.yaml")
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return "script:" + p
}

// handedOffRun runs answerE2E to its hand-off and returns the run dir.
func handedOffRun(t *testing.T, repo, runs, bp string) string {
	t.Helper()
	first := modelScript(t, `- tool_calls: [{function: {name: run, arguments: {command: "echo first > step1.txt"}}}]
- tool_calls: [{function: {name: finish, arguments: {summary: wrote step1}}}]
- tool_calls: [{function: {name: finish, arguments: {summary: nothing more}}}]
`)
	code, out, errs := runCLI("run", bp, "--repo", repo, "--runs-dir", runs, "--model", first)
	if code != exitHandoff || !strings.Contains(out, "sandgate answer ") {
		t.Fatalf("first leg: exit %d, want 3\n%s\n%s", code, out, errs)
	}
	id := strings.TrimSuffix(strings.Fields(out)[1], ":")
	dir := filepath.Join(runs, id)
	if _, err := os.Stat(filepath.Join(dir, "box", "disk.img")); err != nil {
		t.Fatalf("the handed-off run's disk image is gone, an answer could not continue on it: %v", err)
	}
	return dir
}

// TestAnswerCLI continues a handed-off sandboxed run with `sandgate
// answer`: the answered attempt works on the first process's workspace
// (its gate sees step1.txt), the agent is told the note, the run succeeds
// (exit 0) and discards its disk; a further answer is refused.
func TestAnswerCLI(t *testing.T) {
	repo, runs := gitRepo(t), t.TempDir()
	bp := writeBlueprint(t, answerE2E)
	dir := handedOffRun(t, repo, runs, bp)
	fix := modelScript(t, `- tool_calls: [{function: {name: edit_file, arguments: {path: calc.go, old: "a - b", new: "a + b"}}}]
- tool_calls: [{function: {name: finish, arguments: {summary: fixed}}}]
`)
	rec := filepath.Join(t.TempDir(), "exchanges.jsonl")
	code, out, errs := runCLI("answer", filepath.Base(dir), "--runs-dir", runs, "--to", "implement",
		"--note", "Add must add: use a + b", "--by", "ana", "--model", fix, "--record", rec)
	if code != exitOK || !strings.Contains(out, `answered by ana: implement gets the note "Add must add: use a + b"`) ||
		!strings.Contains(out, "✓ gate") || !strings.Contains(out, "#3") {
		t.Fatalf("answer: exit %d, want 0\n%s\n%s", code, out, errs)
	}
	// The model was told the note.
	if b, err := os.ReadFile(rec); err != nil || !strings.Contains(string(b), "Add must add: use a + b") {
		t.Fatalf("the model never saw the note (%v):\n%.2000s", err, b)
	}
	if _, err := os.Stat(filepath.Join(dir, "box")); !os.IsNotExist(err) {
		t.Fatalf("the succeeded run kept its box state: %v", err)
	}
	code, out, _ = runCLI("show", dir)
	if code != exitOK || !strings.Contains(out, "answered by ana at ") || !strings.Contains(out, "status: succeeded") {
		t.Fatalf("show: exit %d\n%s", code, out)
	}
	before := dirState(t, dir)
	code, _, errs = runCLI("answer", dir, "--to", "implement", "--note", "again")
	if code != exitUsage || !strings.Contains(errs, "ended succeeded") {
		t.Fatalf("answering a succeeded run: exit %d %q", code, errs)
	}
	if after := dirState(t, dir); after != before {
		t.Fatalf("a refused answer wrote in the run directory:\n%s\nbefore:\n%s", after, before)
	}
}

// dirState lists every file under dir with its size and time.
func dirState(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%s %d %s\n", p, info.Size(), info.ModTime())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestAnswerCLIBudget: an answer that does not help hands the run off
// again (exit 3, with a fresh retry allowance); budget.answers 1 then
// refuses the next answer by name (exit 2), and the state nothing can
// continue on any more is gone. Typos get a suggestion.
func TestAnswerCLIBudget(t *testing.T) {
	repo, runs := gitRepo(t), t.TempDir()
	bp := writeBlueprint(t, answerE2E)
	dir := handedOffRun(t, repo, runs, bp)
	// An agent that finishes without changing anything, twice.
	empty := modelScript(t, `- tool_calls: [{function: {name: finish, arguments: {summary: nothing to change}}}]
- tool_calls: [{function: {name: finish, arguments: {summary: still nothing}}}]
`)
	code, _, errs := runCLI("answer", dir, "--to", "implemnt", "--note", "x", "--model", empty)
	if code != exitUsage || !strings.Contains(errs, `did you mean "implement"`) {
		t.Fatalf("typo: exit %d %q", code, errs)
	}
	code, _, errs = runCLI("answer", dir, "--to", "implement", "--model", empty)
	if code != exitUsage || !strings.Contains(errs, "--note TEXT") {
		t.Fatalf("no note: exit %d %q", code, errs)
	}
	code, out, errs := runCLI("answer", dir, "--to", "implement", "--note", "try harder", "--model", empty)
	if code != exitHandoff || strings.Count(out, "✗ gate") != 2 {
		t.Fatalf("unhelpful answer: exit %d, want 3 after two more gate runs\n%s\n%s", code, out, errs)
	}
	if _, err := os.Stat(filepath.Join(dir, "box")); !os.IsNotExist(err) {
		t.Fatalf("a run that can no longer be answered kept its box state: %v", err)
	}
	code, _, errs = runCLI("answer", dir, "--to", "implement", "--note", "last try", "--model", empty)
	want := "run " + filepath.Base(dir) + " was answered 1 times, budget.answers 1"
	if code != exitUsage || !strings.Contains(errs, want) {
		t.Fatalf("answer beyond the budget: exit %d, want 2 and %q\n%s", code, want, errs)
	}
}

// TestAnswerWithoutWorkspaceState: a handed-off run whose box state is
// gone (removed by hand, or a run from before answers existed) is not
// continued on an empty workspace, and the refused answer is not
// journaled, so it costs nothing from budget.answers.
func TestAnswerWithoutWorkspaceState(t *testing.T) {
	repo, runs := gitRepo(t), t.TempDir()
	dir := handedOffRun(t, repo, runs, writeBlueprint(t, answerE2E))
	if err := os.RemoveAll(filepath.Join(dir, "box")); err != nil {
		t.Fatal(err)
	}
	journal := must(os.ReadFile(filepath.Join(dir, "events.jsonl")))
	code, _, errs := runCLI("answer", dir, "--to", "implement", "--note", "x", "--model", modelScript(t, "[]\n"))
	if code != exitUsage || !strings.Contains(errs, "workspace state (box/, its disk image) is gone") {
		t.Fatalf("answer without workspace state: exit %d %q", code, errs)
	}
	if after := must(os.ReadFile(filepath.Join(dir, "events.jsonl"))); string(after) != string(journal) {
		t.Fatalf("the refused answer changed the journal:\n%s", after[len(journal):])
	}
}

// answerKeeps hands off after one line; the same scripted agent, run
// again by an answer, adds the second line the gate wants.
const answerKeeps = `version: 1
name: answer-keeps
budget: {answers: 1}
start: implement
nodes:
  implement: {type: agent, prompt: add a line, next: gate}
  gate: {type: shell, run: "test $(wc -l < lines.txt) -ge 2", on_pass: done, on_fail: stuck}
  done: {type: succeed}
  stuck: {type: handoff, reason: one line is not enough}
`

// shellWords splits a command line the way sh does.
func shellWords(t *testing.T, line string) []string {
	out, err := exec.Command("sh", "-c", `eval "set -- $1"; printf '%s\0' "$@"`, "sh", line).Output()
	if err != nil {
		t.Fatalf("sh cannot read %q: %v", line, err)
	}
	return strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
}

// TestAnswerKeepsTheRun: a run started with --model script:FILE (a
// relative path, as the demo's) is answered by the line its hand-off
// prints, run from another directory with nothing added but the note: the
// answer reuses the run's model and succeeds. Before that, an answer
// that cannot start (a real model without its key) is refused without
// touching the run, which stays handed off and answerable.
func TestAnswerKeepsTheRun(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "")
	repo, runs := gitRepo(t), t.TempDir()
	bp := writeBlueprint(t, answerKeeps)
	scripts := t.TempDir()
	os.WriteFile(filepath.Join(scripts, "model.yaml"), []byte(`- tool_calls: [{function: {name: run, arguments: {command: "echo line >> lines.txt"}}}]
- tool_calls: [{function: {name: finish, arguments: {summary: added a line}}}]
`), 0o644)
	var code int
	var out, errs string
	inDir(t, scripts, func() {
		code, out, errs = runCLI("run", bp, "--repo", repo, "--runs-dir", runs, "--model", "script:model.yaml")
	})
	_, printed, found := strings.Cut(out, "to continue it: ")
	if code != exitHandoff || !found {
		t.Fatalf("first leg: exit %d, want 3 and an answer line\n%s\n%s", code, out, errs)
	}
	line := strings.TrimSpace(strings.SplitN(printed, "\n", 2)[0])
	args := shellWords(t, line)
	if args[0] != "sandgate" || args[1] != "answer" || args[len(args)-2] != "--note" {
		t.Fatalf("the printed line is not an answer ending in --note: %q", line)
	}
	dir := args[2]
	journal := must(os.ReadFile(filepath.Join(dir, "events.jsonl")))

	// A real model without its key: refused before anything is recorded.
	code, _, errs = runCLI(append(slices.Clone(args[1:len(args)-1]), "add one more line", "--model", "gpt-4.1")...)
	if code != exitUsage || !strings.Contains(errs, "OPENAI_API_KEY is not set") {
		t.Fatalf("answer with a real model and no key: exit %d %q", code, errs)
	}
	if after := must(os.ReadFile(filepath.Join(dir, "events.jsonl"))); string(after) != string(journal) {
		t.Fatalf("the refused answer changed the journal:\n%s", after[len(journal):])
	}
	if code, shown, _ := runCLI("show", dir); code != exitOK || !strings.Contains(shown, "status: handed_off") {
		t.Fatalf("after the refused answer the run is not handed off:\n%s", shown)
	}

	// The printed line, from another directory, the note filled in.
	inDir(t, t.TempDir(), func() {
		code, out, errs = runCLI(append(slices.Clone(args[1:len(args)-1]), "add one more line")...)
	})
	if code != exitOK || !strings.Contains(out, "✓ gate") {
		t.Fatalf("the printed answer line: exit %d, want 0\n%s\n%s", code, out, errs)
	}
}

// TestScriptWithoutFinishFailsTheNode: a scripted agent whose replies run
// out before it calls finish does not pass its node (it did: the script
// "finished" with a plain message); the run fails and says why.
func TestScriptWithoutFinishFailsTheNode(t *testing.T) {
	repo, runs := gitRepo(t), t.TempDir()
	bp := writeBlueprint(t, "version: 1\nname: short-script\nstart: implement\nnodes:\n  implement: {type: agent, prompt: fix Add, next: done}\n  done: {type: succeed}\n")
	script := modelScript(t, `- tool_calls: [{function: {name: read_file, arguments: {path: calc.go}}}]
`)
	code, out, errs := runCLI("run", bp, "--repo", repo, "--runs-dir", runs, "--model", script)
	if code != exitFailed || !strings.Contains(out, "no replies left") {
		t.Fatalf("exit %d, want 1 with the script's end as the reason\n%s\n%s", code, out, errs)
	}
}
