package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sandgate/sandgate/internal/gitfixture"
)

// Canary credentials in the harness environment. Every test below fails
// if any of them shows up where the harness writes.
var canaries = map[string]string{
	"GITHUB_TOKEN":   "canary-gh-7f3a9c1e2b",
	"OPENAI_API_KEY": "canary-oa-5d8e0b4a71",
	"FOO_TOKEN":      "canary-foo-19c2e6d3",
}

func setCanaries(t *testing.T) {
	for k, v := range canaries {
		t.Setenv(k, v)
	}
}

// leakBlueprint passes GITHUB_TOKEN into the box and prints it; the
// blueprint itself also carries FOO_TOKEN's value in a command and
// OPENAI_API_KEY's in the review title, so the copies of the blueprint,
// the command audit and the review entry are exercised too.
const leakBlueprint = `version: 1
name: leak
sandbox:
  env: [GOFLAGS, GITHUB_TOKEN]
start: fix
nodes:
  fix:
    type: shell
    run: "sed -i 's/a - b/a + b/' calc.go && echo gh=$GITHUB_TOKEN && echo foo=FOOVAL && WRITE true"
    next: test
  test: {type: test, run: "echo tok=$GITHUB_TOKEN; go test -json ./...", on_pass: commit, on_fail: stuck}
  commit: {type: git_commit, message: "fix: Add adds", next: push}
  push: {type: git_push, remote: REMOTE, next: review}
  review: {type: review, dir: REVIEWS, title: "fix OAVAL", next: done}
  done: {type: succeed}
  stuck: {type: handoff, reason: a gate failed}
`

func leakFile(t *testing.T, write string) (bp, remote, reviews string) {
	remote, reviews = filepath.Join(t.TempDir(), "remote.git"), t.TempDir()
	src := strings.NewReplacer("REMOTE", remote, "REVIEWS", reviews, "FOOVAL", canaries["FOO_TOKEN"],
		"OAVAL", canaries["OPENAI_API_KEY"], "WRITE", write).Replace(leakBlueprint)
	return writeBlueprint(t, src), remote, reviews
}

// assertNoCanary reads every regular file under dir and fails on any
// canary value. skip names subdirectories not to read.
func assertNoCanary(t *testing.T, dir string, skip ...string) {
	t.Helper()
	n := 0
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		for _, s := range skip {
			if d.IsDir() && rel == s {
				return filepath.SkipDir
			}
		}
		if !d.Type().IsRegular() {
			return nil
		}
		b, _ := os.ReadFile(p)
		n++
		assertClean(t, rel, string(b))
		return nil
	})
	if err != nil || n == 0 {
		t.Fatalf("walk %s: %v (%d files)", dir, err, n)
	}
}

func assertClean(t *testing.T, where, text string) {
	t.Helper()
	for name, v := range canaries {
		if strings.Contains(text, v) {
			t.Errorf("%s holds the value of %s", where, name)
		}
	}
}

func TestCredentialStaysOutOfTheBoxUnlessAllowed(t *testing.T) {
	setCanaries(t)
	repo, runs := gitRepo(t), t.TempDir()
	bp, _, _ := leakFile(t, "")
	code, out, errs := runCLI("run", bp, "--repo", repo, "--runs-dir", runs)
	want := bp + ":4:18: sandbox.env[1]: GITHUB_TOKEN looks like a credential; the harness does not pass credentials into the box unless the operator allows it (--allow-env GITHUB_TOKEN)"
	if code != exitUsage || !strings.Contains(errs, want) {
		t.Fatalf("exit %d, want 2 and %q\n%s\n%s", code, want, out, errs)
	}
	if m, _ := filepath.Glob(filepath.Join(runs, "*")); len(m) != 0 {
		t.Fatalf("a refused blueprint left runs behind: %v", m)
	}
}

// TestAllowedCredentialIsRedactedEverywhere lets the token into the box, has
// a command print it, and promotes the change all the way to a pushed
// branch and a review entry: no canary may appear in any file of the run
// directory (the box's own disk included), the review entry, the remote or
// the CLI's output, and the redaction markers must be where the values were.
func TestAllowedCredentialIsRedactedEverywhere(t *testing.T) {
	setCanaries(t)
	repo, runs := gitRepo(t), t.TempDir()
	bp, remote, reviews := leakFile(t, "")
	bareRemote(t, repo, remote)
	code, out, errs := runCLI("run", bp, "--repo", repo, "--runs-dir", runs, "--allow-env", "GITHUB_TOKEN", "--json")
	if code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	assertClean(t, "stdout", out)
	assertClean(t, "stderr", errs)
	dirs, _ := filepath.Glob(filepath.Join(runs, "*"))
	if len(dirs) != 1 {
		t.Fatalf("runs: %v", dirs)
	}
	run := dirs[0]
	assertNoCanary(t, run)
	assertNoCanary(t, reviews)
	assertClean(t, "remote", gitRun(t, remote, "log", "--all", "-p", "--format=%H %s%n%b"))
	for file, marker := range map[string]string{
		"nodes/fix/1/output.log": "gh=[redacted GITHUB_TOKEN]", "events.jsonl": "gh=[redacted GITHUB_TOKEN]",
		"commands.jsonl": "[redacted FOO_TOKEN]", "blueprint.yaml": "foo=[redacted FOO_TOKEN]",
	} {
		b, err := os.ReadFile(filepath.Join(run, file))
		if err != nil || !strings.Contains(string(b), marker) {
			t.Errorf("%s: want %q: %v\n%s", file, marker, err, b)
		}
	}
	summary, _ := os.ReadFile(filepath.Join(reviews, filepath.Base(run), "summary.md"))
	if !strings.Contains(string(summary), "fix [redacted OPENAI_API_KEY]") {
		t.Errorf("review summary: %s", summary)
	}
}

// TestCredentialWrittenToTheWorkspaceIsNotPromoted: a command writes the
// token into a file of the change. The commit is refused and the run is
// handed off, so nothing reaches the remote or the review queue. The box's
// own disk (box/, the overlay the file was written to) is the one place
// that holds it: that is the box's content, not something the harness
// wrote, and it never leaves the run directory.
func TestCredentialWrittenToTheWorkspaceIsNotPromoted(t *testing.T) {
	setCanaries(t)
	repo, runs := gitRepo(t), t.TempDir()
	bp, remote, reviews := leakFile(t, "echo $GITHUB_TOKEN > leak.txt &&")
	bareRemote(t, repo, remote)
	code, out, errs := runCLI("run", bp, "--repo", repo, "--runs-dir", runs, "--allow-env", "GITHUB_TOKEN")
	if code != exitHandoff {
		t.Fatalf("exit %d, want 3 (handed off)\n%s\n%s", code, out, errs)
	}
	assertClean(t, "stdout", out)
	assertClean(t, "stderr", errs)
	dirs, _ := filepath.Glob(filepath.Join(runs, "*"))
	assertNoCanary(t, dirs[0], "box")
	md, _ := os.ReadFile(filepath.Join(dirs[0], "handoff.md"))
	if !strings.Contains(string(md), "leak.txt holds the value of GITHUB_TOKEN") {
		t.Fatalf("handoff.md does not say why:\n%s", md)
	}
	if refs := gitRun(t, remote, "for-each-ref", "--format=%(refname)"); strings.Contains(refs, "sandgate/") {
		t.Fatalf("a branch was pushed: %s", refs)
	}
	if m, _ := filepath.Glob(filepath.Join(reviews, "*")); len(m) != 0 {
		t.Fatalf("a review entry was made: %v", m)
	}
}

func gitRun(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := gitfixture.Git(dir, args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
