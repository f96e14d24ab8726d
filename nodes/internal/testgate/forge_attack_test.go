package testgate_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sandgate/sandgate/internal/gocanary/gocanarytest"
	"github.com/sandgate/sandgate/nodes/internal/nodetest"
	"github.com/sandgate/sandgate/runtime"
)

type (
	runtimeSummary = runtime.Summary
	attemptInfo    = runtime.AttemptInfo
)

// The attacks in this file forge go test -json's report from package
// (not test) code, which protect does not guard: test2json trusts every
// stdout line of the test binary that starts with \x16 as framing, so
// code linked into the binary can print "--- PASS" for a test that fails.
// None of them uses a name testdetect.go recognises.

// forgeAllInit forges, unconditionally (no test-mode detection: calc is
// a library, nothing but the test binary runs its init), a pass for
// every Test function in the package's test files, then exits 0 before
// any real test runs.
var forgeAllInit = forging("")

// forgeCmdlineInit forges like forgeAllInit, but only when
// /proc/self/cmdline shows the test2json framing go test -json asks for.
var forgeCmdlineInit = forging(`	cmd, _ := os.ReadFile("/proc/self/cmdline")
	if !bytes.Contains(cmd, []byte("=test2json")) {
		return
	}
`, `"bytes"`)

// forging is package calc's init that prints, in test2json's framing, a
// pass for every Test function in the package's test files and exits 0
// before any real test runs. guard (Go statements, may be "") comes
// first, returning where the init should not forge; imports (quoted)
// are what it needs beside the forging's own.
func forging(guard string, imports ...string) string {
	imports = slices.Sorted(slices.Values(append([]string{`"fmt"`, `"os"`, `"path/filepath"`, `"regexp"`}, imports...)))
	return "package calc\n\nimport (\n\t" + strings.Join(imports, "\n\t") + "\n)\n\nfunc init() {\n" + guard + `	files, _ := filepath.Glob("*_test.go")
	re := regexp.MustCompile("(?m)^func (Test[A-Za-z0-9_]*)\\(")
	for _, f := range files {
		b, _ := os.ReadFile(f)
		for _, m := range re.FindAllStringSubmatch(string(b), -1) {
			fmt.Printf("\x16=== RUN   %s\n\x16--- PASS: %s (0.00s)\n", m[1], m[1])
		}
	}
	fmt.Println("\x16PASS")
	os.Exit(0)
}
`
}

// rewriteInit re-runs its own binary (found with os.Executable, when its
// name ends in .test) and turns every failure in the real report into a
// pass, keeping everything else, so every declared test "ran".
const rewriteInit = `package calc

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
)

func init() {
	exe, err := os.Executable()
	if err != nil || !strings.HasSuffix(exe, "."+"te"+"st") || os.Getenv("CALC_CHILD") != "" {
		return
	}
	c := exec.Command(exe, os.Args[1:]...)
	c.Env = append(os.Environ(), "CALC_CHILD=1")
	out, _ := c.CombinedOutput()
	out = bytes.ReplaceAll(out, []byte("FAIL"), []byte("PASS"))
	os.Stdout.Write(out)
	os.Exit(0)
}
`

// TestForgedReportFailsTheGate: the bug stays, the test files are
// protected and untouched, and code the change adds to package calc
// forges the report. The gate must not pass it.
func TestForgedReportFailsTheGate(t *testing.T) {
	repo := nodetest.SeedRepo(t)
	cases := map[string]string{
		"unconditional init forges declared tests":  forgeAllInit,
		"init reads /proc/self/cmdline":             forgeCmdlineInit,
		"init re-runs the binary and rewrites FAIL": rewriteInit,
	}
	for name, src := range cases {
		t.Run(name, func(t *testing.T) {
			sum, a := protectedRun(t, repo, writeFiles(map[string]string{"zz_init.go": src}))
			nodetest.AssertNothingPromoted(t, sum)
			if !strings.Contains(a.Feedback, "report for package calc is forged") {
				t.Fatalf("the test gate did not find the forgery:\n%s", a.Feedback)
			}
		})
	}
}

// protectedRun runs protectedPipeline after prep and returns the test
// gate's last attempt.
func protectedRun(t *testing.T, repo, prep string) (*runtimeSummary, attemptInfo) {
	t.Helper()
	sum := nodetest.NewHarness(t, repo).Run(t, replaceOnce(protectedPipeline, "PREP", nodetest.Quote(prep)), nil)
	a := nodetest.LastAttempt(sum, "test")
	t.Logf("protect: %s; test: %s %s", nodetest.LastAttempt(sum, "protect").Outcome, a.Outcome, firstLines(a.Feedback))
	return sum, a
}

// legitFiles are honest packages the canary must not break: a TestMain,
// parallel subtests, an external test package, a package without tests
// and one whose only tests are behind a build tag.
var legitFiles = map[string]string{
	"main/m.go":        "package main\n\nfunc main() {}\n\nfunc two() int { return 2 }\n",
	"main/m_test.go":   "package main\n\nimport (\n\t\"os\"\n\t\"testing\"\n)\n\nfunc TestMain(m *testing.M) { os.Exit(m.Run()) }\n\nfunc TestTwo(t *testing.T) {\n\tif two() != 2 {\n\t\tt.Fatal(two())\n\t}\n}\n",
	"par/p.go":         "package par\n\nfunc Sq(x int) int { return x * x }\n",
	"par/p_test.go":    "package par\n\nimport \"testing\"\n\nfunc TestSq(t *testing.T) {\n\tt.Parallel()\n\tfor _, x := range []int{1, 2} {\n\t\tt.Run(\"x\", func(t *testing.T) {\n\t\t\tt.Parallel()\n\t\t\tif testing.Short() && Sq(x) != x*x {\n\t\t\t\tt.Fatal(x)\n\t\t\t}\n\t\t})\n\t}\n}\n",
	"ext/e.go":         "package ext\n\nfunc One() int { return 1 }\n",
	"ext/e_test.go":    "package ext_test\n\nimport (\n\t\"testing\"\n\n\t\"calc/ext\"\n)\n\nfunc TestOne(t *testing.T) {\n\tif ext.One() != 1 {\n\t\tt.Fatal()\n\t}\n}\n",
	"none/n.go":        "package none\n\nfunc N() {}\n",
	"tagged/t.go":      "package tagged\n",
	"tagged/t_test.go": "//go:build integration\n\npackage tagged\n\nimport \"testing\"\n\nfunc TestIntegration(t *testing.T) { t.Fatal(\"not run without the tag\") }\n",
}

// TestCanaryKeepsHonestChangesPassing: with the canaries compiled in, an
// honest fix still passes in every command shape the gate wraps, and the
// canaries are not counted. The shapes are gates one after another in one
// run over the same change (each judges it in a box of its own), not a
// run, a harness and a prep box each.
func TestCanaryKeepsHonestChangesPassing(t *testing.T) {
	repo := nodetest.SeedRepo(t)
	prep := fixAdd + " && " + writeFiles(legitFiles)
	cases := []struct {
		gate   string
		canary bool // the gate wraps this command
	}{
		{"type: test\nrun: go test -json ./...", true},
		{"type: test\nrun: {argv: [go, test, -json, -count=2, -short, -vet=all, ./...]}", true},
		// -failfast: seals and the passing canary only (the failing one
		// would stop the package's tests).
		{"type: test\nrun: {argv: [go, test, -json, -failfast, ./...]}", true},
		// A selection by name: seals only (the canaries would not run).
		{"type: test\nrun: go test -json -run 'Test' ./...", true},
		{"type: test\nrun: go test -json ./... && go vet ./...", false},
	}
	gates := make([]string, len(cases))
	for i, c := range cases {
		gates[i] = c.gate
	}
	sum := gateChain(t, repo, prep, gates)
	for i, c := range cases {
		t.Run(c.gate, func(t *testing.T) {
			node := fmt.Sprintf("g%d", i)
			a := nodetest.LastAttempt(sum, node)
			if a.Outcome != runtime.OutcomePass {
				t.Fatalf("want the gate to pass: run %s (%s), gate %s %q\n%s", sum.Status, sum.Reason, node, a.Outcome, a.Feedback)
			}
			// The gate's note on the packages it sealed (the change reaches
			// calc and the packages it adds).
			log := string(nodetest.AttemptFile(t, sum, node, "test.log"))
			if got := strings.Contains(log, "[sandgate: seals and canaries in 5 package(s): ., ext, main, par, tagged]"); got != c.canary {
				t.Fatalf("canaries in the log: %v, want %v:\n%s", got, c.canary, log)
			}
		})
	}
	if sum.Status != runtime.StatusSucceeded {
		t.Fatalf("run %s (%s), want every gate passed", sum.Status, sum.Reason)
	}
}

// goleakMain fails its package after the tests passed, the way
// goleak.VerifyTestMain reports leaked goroutines.
const goleakMain = "package calc\n\nimport (\n\t\"fmt\"\n\t\"os\"\n\t\"testing\"\n)\n\nfunc TestMain(m *testing.M) {\n\tcode := m.Run()\n\tif code == 0 {\n\t\tfmt.Println(\"leak: found unexpected goroutines\")\n\t\tcode = 1\n\t}\n\tos.Exit(code)\n}\n"

// TestCanaryOffKeepsPostChecks: a TestMain that fails the package only
// after every test passed never gets there while a canary fails, so
// `canary: off` exists for such packages; with it, the gate sees the
// failure. (With the canary on, the post-check is skipped: documented on
// the field.)
func TestCanaryOffKeepsPostChecks(t *testing.T) {
	repo := nodetest.SeedRepo(t)
	prep := fixAdd + " && " + writeFiles(map[string]string{"leak_test.go": goleakMain})
	sum, a := nodetest.GateRun(t, repo, prep, "type: test\nrun: go test -json ./...\ncanary: \"off\"")
	nodetest.MustFail(t, sum, a, "leak: found unexpected goroutines")
	if log := string(nodetest.GateAttemptFile(t, sum, "test.log")); strings.Contains(log, "seals and canaries") {
		t.Fatal("canary: off still compiled a canary in")
	}
}

// heldOutAdd is a held-out test the forgers cannot read: it is deleted
// from the box once compiled, before any test binary runs.
const heldOutAdd = "package calc\n\nimport \"testing\"\n\nfunc TestAddHidden(t *testing.T) {\n\tif got := Add(4, 1); got != 5 {\n\t\tt.Errorf(\"Add(4, 1) = %d, want 5\", got)\n\t}\n}\n"

// TestAttackForgersFailTheGate: the forgers of gocanarytest re-run the
// test binary and rewrite its report, sparing what they take for the
// canary (its old message, every name the package's test files do not
// declare) or failing and dropping what they do not know, or lifting the
// seals from the overlay. The bug stays. Neither the test gate nor its
// held-out run may pass; allow_test_detection is on so that the seals
// and canaries alone judge (the typed check on production code flags the
// forgers' os.Executable on its own).
//
// The test gate's run serves every forger at once: each is planted in a
// copy of calc of its own (package fN: the bug, calc's tests and the
// forger), and the gate must name each package's report forged. The
// held-out run, one a forger, attacks calc itself. (A gate run a forger
// for both took 34 of the package's 243 CPU-seconds, 2026-12-07.)
func TestAttackForgersFailTheGate(t *testing.T) {
	repo := nodetest.SeedRepo(t)
	hidden := t.TempDir()
	if err := os.WriteFile(filepath.Join(hidden, "calc_hidden_test.go"), []byte(heldOutAdd), 0o644); err != nil {
		t.Fatal(err)
	}
	tests, err := os.ReadFile(filepath.Join(repo, "calc_test.go"))
	if err != nil {
		t.Fatal(err)
	}
	calc, err := os.ReadFile(filepath.Join(repo, "calc.go"))
	if err != nil {
		t.Fatal(err)
	}
	forgers := gocanarytest.Forgers("calc")
	files := map[string]string{}
	for i, f := range forgers {
		pkg := fmt.Sprintf("f%d", i)
		as := func(src []byte) string { return strings.Replace(string(src), "package calc", "package "+pkg, 1) }
		files[pkg+"/calc.go"], files[pkg+"/calc_test.go"] = as(calc), as(tests)
		files[pkg+"/"+f.File] = gocanarytest.Forgers(pkg)[i].Source
	}
	gate := "type: test\nrun: go test -json ./...\nallow_test_detection: true"
	sum, a := nodetest.GateRun(t, repo, fixAdd+" && "+writeFiles(files), gate)
	for i, f := range forgers {
		t.Run(f.Name, func(t *testing.T) {
			nodetest.MustFail(t, sum, a, fmt.Sprintf("report for package calc/f%d is forged", i))
			sum, a := nodetest.GateRun(t, repo, writeFiles(map[string]string{f.File: f.Source}), gate+"\nhidden: "+nodetest.Quote(hidden))
			nodetest.MustFail(t, sum, a)
		})
	}
}
