package main

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
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
	empty := modelScript(t, "[]\n")
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
