package testgate_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sandgate/sandgate/internal/gitfixture"
	"github.com/sandgate/sandgate/nodes/internal/nodetest"
	"github.com/sandgate/sandgate/runtime"
)

// The tests in this file perform cheats an agent can use against a
// blueprint whose tests are protected (protect: *_test.go) and whose test
// gate runs `go test -json ./...`: the agent may change any other file.
// Each asserts that the buggy Add (a - b) is never committed.

// protectedPipeline protects every test file, runs the tests and commits.
const protectedPipeline = `version: 1
name: protected
start: prep
nodes:
  prep: {type: shell, run: PREP, next: protect}
  protect: {type: protect, paths: ["*_test.go"], on_pass: test, on_fail: stuck}
  test: {type: test, run: go test -json ./..., on_pass: commit, on_fail: stuck}
  commit: {type: git_commit, message: fix, next: done}
  done: {type: succeed}
  stuck: {type: handoff, reason: a gate failed}
`

func runProtected(t *testing.T, repo, prep string) {
	t.Helper()
	src := replaceOnce(protectedPipeline, "PREP", nodetest.Quote(prep))
	sum := nodetest.NewHarness(t, repo).Run(t, src, nil)
	a := nodetest.LastAttempt(sum, "test")
	t.Logf("protect: %s; test: %s %s", nodetest.LastAttempt(sum, "protect").Outcome, a.Outcome, firstLines(a.Feedback))
	nodetest.AssertNothingPromoted(t, sum)
	attackRan(t, sum)
}

// attackRan fails the test when prep, the attack, failed: prep goes by
// next, taken whatever its outcome, and a failed attack leaves the bug
// to fail the test gate, so nothing promoted would pass the test blind.
func attackRan(t *testing.T, sum *runtime.Summary) {
	t.Helper()
	if p := nodetest.LastAttempt(sum, "prep"); p.Outcome != runtime.OutcomePass {
		t.Fatalf("the attack's preparation failed, the test is blind: %s\n%s", p.Outcome, firstLines(p.Feedback))
	}
}

func replaceOnce(s, old, new string) string {
	i := len(s)
	for j := 0; j+len(old) <= len(s); j++ {
		if s[j:j+len(old)] == old {
			i = j
			break
		}
	}
	if i == len(s) {
		return s
	}
	return s[:i] + new + s[i+len(old):]
}

// seedWithSub adds package calc/sub, whose test fails (Sub adds), to the
// seed repository's base commit.
func seedWithSub(t *testing.T) string {
	t.Helper()
	repo := nodetest.SeedRepo(t)
	err := gitfixture.Write(repo, map[string]string{"sub/sub.go": subCode, "sub/sub_test.go": subTest})
	if err == nil {
		err = gitfixture.Commit(repo, "dev", "sub with a bug")
	}
	if err != nil {
		t.Fatal(err)
	}
	return repo
}

// forgeInit is package (not test) code: in a test binary it prints, in
// test2json's framing, a pass for every Test function in the package's
// test files, and exits before any real test runs.
var forgeInit = forging(`	if !testing.Testing() {
		return
	}
`, `"testing"`)

// skipInit is package code that deselects the failing test by adding
// -test.skip to the test binary's arguments before testing parses them.
const skipInit = `package calc

import (
	"os"
	"testing"
)

func init() {
	if testing.Testing() {
		os.Args = append(os.Args, "-test.skip=^TestAdd$")
	}
}
`

// TestRedgatesPackageInitControlsTheTestBinary: the test files are
// protected and untouched, the bug stays, and package code run by the
// test binary forges the stream or deselects the failing test.
func TestRedgatesPackageInitControlsTheTestBinary(t *testing.T) {
	repo := nodetest.SeedRepo(t)
	cases := map[string]string{
		"forged test2json framing": writeFiles(map[string]string{"zz_init.go": forgeInit}),
		"-test.skip via os.Args":   writeFiles(map[string]string{"zz_init.go": skipInit}),
	}
	for name, prep := range cases {
		t.Run(name, func(t *testing.T) { runProtected(t, repo, prep) })
	}
}

// TestRedgatesNestedModuleHidesPackage: a go.mod dropped into sub makes
// it a module of its own, which `go test ./...` at the root never visits,
// so its failing test is neither run nor reported.
func TestRedgatesNestedModuleHidesPackage(t *testing.T) {
	repo := seedWithSub(t)
	runProtected(t, repo, fixAdd+" && printf 'module sub\\n\\ngo 1.22\\n' > sub/go.mod")
}

// TestRedgatesProtectedDirReplaced: the directory holding a protected
// test file becomes a symlink or a plain file; the test file is gone from
// the commit although protect names only test files.
func TestRedgatesProtectedDirReplaced(t *testing.T) {
	repo := seedWithSub(t)
	cases := map[string]string{
		"symlink": fixAdd + " && rm -rf sub && ln -s /etc sub",
		"file":    fixAdd + " && rm -rf sub && echo x > sub",
	}
	for name, prep := range cases {
		t.Run(name, func(t *testing.T) { runProtected(t, repo, prep) })
	}
}

func firstLines(s string) string {
	if len(s) > 300 {
		return s[:300]
	}
	return s
}

// TestRedgatesLintUnformattedOddNames: gofmt -l exits 0 and only lists
// files, so a lint gate judges by the names it recognises; an unformatted
// file whose name is not plain ASCII must still fail it.
func TestRedgatesLintUnformattedOddNames(t *testing.T) {
	repo := nodetest.SeedRepo(t)
	names := map[string]string{"unicode": "zähler.go", "plus in dir": "x+y/z.go", "dash": "./-d.go", "space": "a b/c.go"}
	for name, file := range names {
		t.Run(name, func(t *testing.T) {
			prep := fmt.Sprintf("%s && mkdir -p \"$(dirname %s)\" && printf 'package calc\\nfunc   Sub(a,b int) int {return a-b}\\n' > %s", fixAdd, shellQ(file), shellQ(file))
			sum, a := nodetest.GateRun(t, repo, prep, "type: lint\nrun: [\"gofmt -l .\"]")
			if a.Outcome != "fail" {
				t.Fatalf("lint passed an unformatted %s: run %s\n%s", file, sum.Status, a.Feedback)
			}
		})
	}
}

func shellQ(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// TestRedgatesPackageInitForgesHeldOutTests: held-out tests are copied
// into the package directory of a throwaway box, where package code run
// by the test binary reads their names and forges a pass for each.
func TestRedgatesPackageInitForgesHeldOutTests(t *testing.T) {
	repo := nodetest.SeedRepo(t)
	dir := t.TempDir()
	held := "package calc\n\nimport \"testing\"\n\nfunc TestHeldOutAdd(t *testing.T) {\n\tif Add(2, 3) != 5 {\n\t\tt.Fatal(\"Add(2, 3) != 5\")\n\t}\n}\n"
	if err := os.WriteFile(filepath.Join(dir, "calc_held_test.go"), []byte(held), 0o644); err != nil {
		t.Fatal(err)
	}
	src := `version: 1
name: held
start: prep
nodes:
  prep: {type: shell, run: ` + nodetest.Quote(writeFiles(map[string]string{"zz_init.go": forgeInit})) + `, next: held}
  held: {type: test, run: go test -json ./..., hidden: ` + nodetest.Quote(dir) + `, on_pass: commit, on_fail: stuck}
  commit: {type: git_commit, message: fix, next: done}
  done: {type: succeed}
  stuck: {type: handoff, reason: a gate failed}
`
	sum := nodetest.NewHarness(t, repo).Run(t, src, nil)
	t.Logf("held: %s %s", nodetest.LastAttempt(sum, "held").Outcome, firstLines(nodetest.LastAttempt(sum, "held").Feedback))
	nodetest.AssertNothingPromoted(t, sum)
	attackRan(t, sum)
}
