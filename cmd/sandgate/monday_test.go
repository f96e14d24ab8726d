package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sandgate/sandgate/runtime"
)

func porcelain(t *testing.T, repo string) string {
	t.Helper()
	cmd := exec.Command("git", "-C", repo, "status", "--porcelain", "--ignored", "--untracked-files=all")
	cmd.Env = append(os.Environ(), "GIT_OPTIONAL_LOCKS=0") // status itself must not refresh the index
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

func emptyDir(t *testing.T, dir string) {
	t.Helper()
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("%s is not empty: %v", dir, ents)
	}
}

// TestUncommittedChanges: a dirty work tree stops the run before anything
// is created; --include-uncommitted runs on exactly the work tree (edited
// and untracked files), --head on HEAD; the user's index and files are
// byte-for-byte untouched either way.
func TestUncommittedChanges(t *testing.T) {
	repo, runs := gitRepo(t), t.TempDir()
	os.WriteFile(filepath.Join(repo, "calc.go"), []byte("package calc\n\nfunc Add(a, b int) int { return a + b }\n"), 0o644)
	os.WriteFile(filepath.Join(repo, "notes.txt"), []byte("untracked\n"), 0o644)
	os.WriteFile(filepath.Join(repo, "staged.txt"), []byte("staged\n"), 0o644)
	gitRun(t, repo, "add", "staged.txt")
	index := filepath.Join(repo, ".git", "index")
	before, idxBefore := porcelain(t, repo), must(os.ReadFile(index))
	stBefore := must(os.Stat(index))
	bp := writeBlueprint(t, "version: 1\nname: dirty\nstart: a\nnodes:\n  a: {type: shell, run: \"grep -q 'a + b' calc.go && test -f notes.txt && test -f staged.txt\", on_pass: done, on_fail: bad}\n  done: {type: succeed}\n  bad: {type: fail}\n")

	code, _, errs := runCLI("run", bp, "--repo", repo, "--runs-dir", runs)
	if code != exitUsage || !strings.Contains(errs, "3 file(s) differ from HEAD") || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
		t.Fatalf("dirty tree: exit %d, want 2 and one line naming 3 files: %q", code, errs)
	}
	emptyDir(t, runs)
	if code, out, errs := runCLI("run", bp, "--repo", repo, "--runs-dir", runs, "--include-uncommitted"); code != exitOK {
		t.Fatalf("--include-uncommitted: exit %d\n%s\n%s", code, out, errs)
	}
	if code, out, errs := runCLI("run", bp, "--repo", repo, "--runs-dir", runs, "--head"); code != exitFailed {
		t.Fatalf("--head must run without the changes (and fail here): exit %d\n%s\n%s", code, out, errs)
	}
	if after := porcelain(t, repo); after != before {
		t.Fatalf("git status changed:\nbefore %q\nafter  %q", before, after)
	}
	stAfter := must(os.Stat(index))
	if !bytes.Equal(must(os.ReadFile(index)), idxBefore) || !stAfter.ModTime().Equal(stBefore.ModTime()) {
		t.Fatal("the user's index was rewritten")
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// TestArgvInputStaysOneArgument runs an argv command in a real box with
// hostile input values: each reaches the program as exactly one inert
// argument (no word splitting, no shell), and a strict pattern refuses an
// option-looking value before anything is created. The values go in one
// run, an input each (a box start each cost 5 s under -race): printf
// prints every argument it gets on a line of its own, so a value split in
// two, or run, shows in the one output.
func TestArgvInputStaysOneArgument(t *testing.T) {
	repo := gitRepo(t)
	canary := filepath.Join(t.TempDir(), "pwned")
	values := []string{"a b  c", "x; touch " + canary, "$(touch " + canary + ")", "`touch " + canary + "`", "-v", "' \"quoted\" \\", "two\nlines"}
	var inputs, argv, want strings.Builder
	var given, required []string // --input flags: the values; an inert x each
	for i, v := range values {
		fmt.Fprintf(&inputs, "  arg%d: {required: true, pattern: '(?s).*'}\n", i)
		fmt.Fprintf(&argv, ", \"${{ inputs.arg%d }}\"", i)
		fmt.Fprintf(&want, "<%s>\n", v)
		given = append(given, "--input", fmt.Sprintf("arg%d=%s", i, v))
		required = append(required, "--input", fmt.Sprintf("arg%d=x", i))
	}
	want.WriteString("<./...>\n")
	bp := writeBlueprint(t, `version: 1
name: argv
inputs:
`+inputs.String()+`  pkg: {default: ./..., pattern: '[./a-z][./a-z0-9_-]*'}
start: a
nodes:
  a: {type: shell, run: {argv: [printf, "<%s>\n"`+argv.String()+`, "${{ inputs.pkg }}"]}, next: done}
  done: {type: succeed}
`)
	code, out, errs := runCLI(append([]string{"run", bp, "--repo", repo, "--runs-dir", t.TempDir(), "--json"}, given...)...)
	if code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	var sum runtime.Summary
	if err := json.Unmarshal([]byte(out), &sum); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if got, _ := sum.Attempts[0].Outputs["output"].(string); got != want.String() {
		t.Fatalf("the command received %q, want %q", got, want.String())
	}
	if _, err := os.Stat(canary); err == nil {
		t.Fatal("an input value ran as a command")
	}
	runs := t.TempDir()
	for _, v := range []string{"-exec", "./x y", "./x;id"} {
		code, _, errs := runCLI(append([]string{"run", bp, "--repo", repo, "--runs-dir", runs, "--input", "pkg=" + v}, required...)...)
		if code != exitUsage || !strings.Contains(errs, "does not match its pattern") || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
			t.Fatalf("pkg=%q: exit %d %q", v, code, errs)
		}
	}
	emptyDir(t, runs)
}

// TestRunByNameAndList runs a built-in blueprint by name from inside the
// user's repository (no path into the source tree) and lists them.
func TestRunByNameAndList(t *testing.T) {
	repo := gitRepo(t)
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	script := filepath.Join(t.TempDir(), "model.yaml")
	os.WriteFile(script, []byte("[]\n"), 0o644)
	var code int
	var out, errs string
	inDir(t, repo, func() { code, out, errs = runCLI("run", "lint-fix", "--model", "script:"+script) })
	if code != exitOK || !strings.Contains(out, "✓ lint") {
		t.Fatalf("run lint-fix by name: exit %d\n%s\n%s", code, out, errs)
	}
	if s := porcelain(t, repo); s != "" {
		t.Fatalf("the run left %q in the work tree", s)
	}
	inDir(t, repo, func() { code, _, errs = runCLI("run", "no-such-blueprint") })
	if code != exitUsage || !strings.Contains(errs, "fix-failing-test") || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
		t.Fatalf("unknown name: exit %d %q", code, errs)
	}
	code, out, _ = runCLI("blueprints")
	for _, want := range []string{"fix-failing-test", "lint-fix", "--input packages=", "default ./...", "--input task=", "required"} {
		if code != exitOK || !strings.Contains(out, want) {
			t.Fatalf("blueprints lacks %q:\n%s", want, out)
		}
	}
}

// TestRunIDsAndInterrupted: show and cancel take a run id; a run whose
// harness died shows as interrupted with the resume command.
func TestRunIDsAndInterrupted(t *testing.T) {
	repo, runs := gitRepo(t), t.TempDir()
	bp := writeBlueprint(t, "version: 1\nname: quick\nstart: a\nnodes:\n  a: {type: shell, run: \"true\", next: done}\n  done: {type: succeed}\n")
	if code, out, errs := runCLI("run", bp, "--repo", repo, "--runs-dir", runs); code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	dirs, _ := filepath.Glob(filepath.Join(runs, "*"))
	id := filepath.Base(dirs[0])
	if code, out, _ := runCLI("show", id, "--runs-dir", runs); code != exitOK || !strings.Contains(out, "status: succeeded") {
		t.Fatalf("show by id: %d\n%s", code, out)
	}
	if code, _, errs := runCLI("show", "nope", "--runs-dir", runs); code != exitUsage || !strings.Contains(errs, "no run nope in") {
		t.Fatalf("show unknown id: %d %q", code, errs)
	}
	// Make it look like a harness that died mid-run: no end in the
	// journal, and a pid file naming a process that has exited.
	journal := filepath.Join(dirs[0], "events.jsonl")
	var kept []string
	for _, l := range strings.Split(strings.TrimSpace(string(must(os.ReadFile(journal)))), "\n") {
		if !strings.Contains(l, `"run_finished"`) {
			kept = append(kept, l)
		}
	}
	os.WriteFile(journal, []byte(strings.Join(kept, "\n")+"\n"), 0o644)
	dead := exec.Command("true")
	dead.Run()
	os.WriteFile(filepath.Join(dirs[0], "pid"), []byte(strconv.Itoa(dead.Process.Pid)), 0o644)
	code, out, _ := runCLI("runs", "--runs-dir", runs)
	if code != exitOK || !strings.Contains(out, "interrupted") || !strings.Contains(out, "sandgate resume "+dirs[0]) || strings.Contains(out, "running") {
		t.Fatalf("runs:\n%s", out)
	}
	if _, out, _ := runCLI("show", id, "--runs-dir", runs); !strings.Contains(out, "status: interrupted") || !strings.Contains(out, "resume with: sandgate resume") {
		t.Fatalf("show:\n%s", out)
	}
	// A live harness (this process) is still running.
	os.WriteFile(filepath.Join(dirs[0], "pid"), []byte(strconv.Itoa(os.Getpid())), 0o644)
	if _, out, _ := runCLI("runs", "--runs-dir", runs); !strings.Contains(out, "running") {
		t.Fatalf("live run:\n%s", out)
	}
	if code, out, errs := runCLI("cancel", id, "--runs-dir", runs); code != exitOK || !strings.Contains(out, dirs[0]) {
		t.Fatalf("cancel by id: %d %s %s", code, out, errs)
	}
	if _, err := os.Stat(filepath.Join(dirs[0], runtime.CancelFile)); err != nil {
		t.Fatalf("cancel by id wrote no request: %v", err)
	}
}

// TestPreflightErrors: each mistake is one line on stderr, exit 2, and no
// run directory is left behind.
func TestPreflightErrors(t *testing.T) {
	repo := gitRepo(t)
	t.Setenv("OPENAI_API_KEY", "")
	push := "version: 1\nname: p\ninputs:\n  remote: {required: true}\n  word: {default: ok, pattern: '\\w+'}\nstart: c\nnodes:\n  c: {type: git_commit, next: p}\n  p: {type: git_push, remote: \"${{ inputs.remote }}\", next: done}\n  done: {type: succeed}\n"
	tokenPush := strings.Replace(push, `next: done}`, `token_env: GH_TOKEN, next: done}`, 1)
	agent := "version: 1\nname: a\nstart: a\nnodes:\n  a: {type: agent, prompt: hi, on_pass: done, on_fail: done}\n  done: {type: succeed}\n"
	cases := []struct {
		name, bp, repo, want string
		args                 []string
	}{
		{"not a repo", push, t.TempDir(), "is not a git repository", []string{"--input", "remote=/x"}},
		{"missing input", push, repo, "missing required input remote", nil},
		{"bad value", push, repo, "does not match its pattern", []string{"--input", "remote=/x", "--input", "word=a b"}},
		{"unknown input", push, repo, `unknown input "nope"`, []string{"--input", "remote=/x", "--input", "nope=1"}},
		{"remote path missing", push, repo, "does not exist", []string{"--input", "remote=" + filepath.Join(t.TempDir(), "gone.git")}},
		{"model key", agent, repo, "OPENAI_API_KEY is not set", nil},
		{"token to a host not allowed", tokenPush, repo, "node p pushes with GH_TOKEN: the blueprint would send a credential to https://evil.example/x.git; credentials go only to https://github.com or to URL prefixes the operator allows (--allow-endpoint https://evil.example)",
			[]string{"--input", "remote=https://evil.example/x.git"}},
		{"token to a local path", tokenPush, repo, "is not an http(s) URL", []string{"--input", "remote=" + t.TempDir()}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			runs := t.TempDir()
			args := append([]string{"run", writeBlueprint(t, c.bp), "--repo", c.repo, "--runs-dir", runs}, c.args...)
			code, _, errs := runCLI(args...)
			errs = strings.TrimSpace(errs)
			if code != exitUsage || !strings.Contains(errs, c.want) || strings.Contains(errs, "\n") || strings.Contains(errs, "[") {
				t.Fatalf("exit %d, want 2 and one line with %q: %q", code, c.want, errs)
			}
			emptyDir(t, runs)
		})
	}
}

func TestVersion(t *testing.T) {
	for _, arg := range []string{"--version", "version"} {
		code, out, _ := runCLI(arg)
		if code != exitOK || !strings.HasPrefix(out, "sandgate ") || !strings.Contains(out, "go1.") {
			t.Fatalf("%s: %d %q", arg, code, out)
		}
	}
}

// TestProgressTicks: on a TTY a running step's line is refreshed with its
// elapsed time on every tick (fake clock and ticker: no timing).
func TestProgressTicks(t *testing.T) {
	var buf bytes.Buffer
	now := time.Unix(1000, 0)
	ticks := make(chan time.Time)
	p := &progress{w: &buf, enabled: true, tty: true, start: map[string]time.Time{},
		now:       func() time.Time { return now },
		newTicker: func() (<-chan time.Time, func()) { return ticks, func() {} }}
	p.Event(runtime.Event{Type: runtime.EvNodeStarted, Node: "test", Attempt: 1})
	// A send completes only when the refresher takes the tick, so the
	// second send of each pair returns after the first refresh finished.
	for i := 0; i < 2; i++ {
		p.mu.Lock()
		now = now.Add(7 * time.Second)
		p.mu.Unlock()
		ticks <- now
		ticks <- now
	}
	p.close()
	if out := buf.String(); !strings.Contains(out, "running test#1 7s") || !strings.Contains(out, "running test#1 14s") {
		t.Fatalf("no elapsed refresh: %q", out)
	}
}
