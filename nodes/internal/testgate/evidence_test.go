package testgate_test

import (
	"encoding/base64"
	"fmt"
	"path"
	"sort"
	"strings"
	"testing"

	"github.com/sandgate/sandgate/internal/gitfixture"
	"github.com/sandgate/sandgate/nodes/internal/nodetest"
	"github.com/sandgate/sandgate/runtime"
)

// The tests in this file perform, in a real box on a real Go module, the
// cheats an agent used to get unverified code past the test gate, and fail
// if the gate passes.

// writeFiles is a shell command writing files into the workspace, as an
// agent's edit would.
func writeFiles(files map[string]string) string {
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	cmds := []string{"true"}
	for _, n := range names {
		b64 := base64.StdEncoding.EncodeToString([]byte(files[n]))
		cmds = append(cmds, fmt.Sprintf("mkdir -p %s && echo %s | base64 -d > %s", path.Dir(n), b64, n))
	}
	return strings.Join(cmds, " && ")
}

const fixAdd = "sed -i 's/a - b/a + b/' calc.go"

func mustPass(t *testing.T, sum *runtime.Summary, a runtime.AttemptInfo) {
	t.Helper()
	if sum.Status != runtime.StatusSucceeded || a.Outcome != runtime.OutcomePass {
		t.Fatalf("want the gate to pass: run %s (%s), gate %s\n%s", sum.Status, sum.Reason, a.Outcome, a.Feedback)
	}
}

const (
	subCode      = "package sub\n\n// Sub returns a - b.\nfunc Sub(a, b int) int { return a + b }\n"
	subTest      = "package sub\n\nimport \"testing\"\n\nfunc TestSub(t *testing.T) {\n\tif Sub(3, 1) != 2 {\n\t\tt.Fatal(\"Sub(3, 1) != 2\")\n\t}\n}\n"
	silencerInit = "package sub\n\nimport (\n\t\"os\"\n\t\"testing\"\n)\n\nfunc init() {\n\tif testing.Testing() {\n\t\tos.Exit(0)\n\t}\n}\n"
	forgedSkip   = "package sub\n\nimport (\n\t\"fmt\"\n\t\"os\"\n\t\"testing\"\n)\n\nfunc init() {\n\tif testing.Testing() {\n\t\tfmt.Println(\"?   \\tcalc/sub\\t[no test files]\")\n\t\tos.Exit(0)\n\t}\n}\n"
	quietMain    = "package sub\n\nimport (\n\t\"os\"\n\t\"testing\"\n)\n\nfunc TestMain(m *testing.M) { os.Exit(0) }\n"
	helperOnly   = "package sub\n\nfunc helper() int { return 1 }\n"
)

// TestTestGateCatchesSilencedPackages: package calc/sub has a failing
// test; the agent silences it while calc's own tests pass and keep the
// total above zero.
func TestTestGateCatchesSilencedPackages(t *testing.T) {
	repo := nodetest.SeedRepo(t)
	cases := []struct {
		name  string
		files map[string]string
		allow string
		want  []string
	}{
		{"init calls os.Exit(0) in test binaries", map[string]string{"sub/sub.go": subCode, "sub/sub_test.go": subTest, "sub/quiet.go": silencerInit},
			"", []string{"package calc/sub ran no test", "exited before running tests"}},
		{"init forges go's [no test files] line", map[string]string{"sub/sub.go": subCode, "sub/sub_test.go": subTest, "sub/quiet.go": forgedSkip},
			"", []string{"package calc/sub ran no test", "[no test files]"}},
		{"TestMain never calls m.Run", map[string]string{"sub/sub.go": subCode, "sub/sub_test.go": subTest, "sub/main_test.go": quietMain},
			"", []string{"package calc/sub ran no test"}},
		{"test files without tests", map[string]string{"sub/sub.go": subCode, "sub/sub_test.go": helperOnly},
			"", []string{"package calc/sub ran no test", "no tests to run"}},
		{"allow_no_tests names another package", map[string]string{"sub/sub.go": subCode, "sub/sub_test.go": subTest, "sub/quiet.go": silencerInit},
			"\nallow_no_tests: [calc/other, calc/sub/deeper/...]", []string{"package calc/sub ran no test"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sum, a := nodetest.GateRun(t, repo, fixAdd+" && "+writeFiles(c.files), "type: test\nrun: go test -json ./..."+c.allow)
			nodetest.MustFail(t, sum, a, c.want...)
		})
	}
}

// TestTestGatePackagesThatMayRunNoTest: a package without test files
// passes as before, and allow_no_tests lets a named package run none.
func TestTestGatePackagesThatMayRunNoTest(t *testing.T) {
	repo := nodetest.SeedRepo(t)
	cases := []struct {
		name  string
		files map[string]string
		allow string
	}{
		{"no test files", map[string]string{"sub/sub.go": subCode}, ""},
		{"allowed by path", map[string]string{"sub/sub.go": subCode, "sub/sub_test.go": helperOnly}, "\nallow_no_tests: [calc/sub]"},
		{"allowed by subtree", map[string]string{"sub/sub.go": subCode, "sub/sub_test.go": helperOnly}, "\nallow_no_tests: [calc/...]"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sum, a := nodetest.GateRun(t, repo, fixAdd+" && "+writeFiles(c.files), "type: test\nrun: go test -json ./..."+c.allow)
			mustPass(t, sum, a)
		})
	}
}

const (
	passingReport = `<testsuite><testcase name="a"/><testcase name="b"/></testsuite>`
	writeReport   = "printf '%s' '" + passingReport + "' > "
)

// TestTestGateReportMustBeThisRuns: with report:, only a regular file the
// test command itself wrote counts, and the exit code still matters.
func TestTestGateReportMustBeThisRuns(t *testing.T) {
	repo := repoWithReport(t, nodetest.SeedRepo(t))
	const r = "/tmp/report.xml"
	planted := writeReport + r
	cases := []struct{ name, prep, run, report, want string }{
		{"planted before the run and the command fails", planted, "exit 1", r, "did not write it"},
		{"planted with an old mtime and the command writes nothing", planted + " && touch -d 2020-01-01 " + r, "true", r, "did not write it"},
		{"written with a back-dated mtime", "", writeReport + r + " && touch -d 2020-01-01 " + r, r, "before this test run started"},
		{"passing report but a failing command", "", writeReport + r + "; exit 1", r, "exited with 1 although no test failed"},
		{"symlink to a planted file", writeReport + "/tmp/r.xml", "ln -s /tmp/r.xml " + r, r, "not a regular file"},
		{"symlink to a workspace file", "", "ln -s /work/base.xml " + r, r, "not a regular file"},
		{"fifo", "", "mkfifo " + r, r, "not a regular file"},
		{"a directory in its place", "", "mkdir -p " + r, r, "not a regular file"},
		// out/ holds a file: the judge box holds what a commit would, and
		// git keeps no empty directory.
		{"written into the workspace through a directory link", "mkdir -p /work/out && touch /work/out/.keep", "ln -s /work/out /tmp/out && " + writeReport + "/tmp/out/r.xml", "/tmp/out/r.xml", "workspace changed while the gate ran"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			prep := fixAdd
			if c.prep != "" {
				prep += " && " + c.prep
			}
			sum, a := nodetest.GateRun(t, repo, prep, "type: test\nrun: "+nodetest.Quote(c.run)+"\nreport: "+c.report)
			nodetest.MustFail(t, sum, a, c.want)
		})
	}
}

// repoWithReport commits a passing base.xml, so a report already in the
// base commit (the overlay's lower layer) is covered too.
func repoWithReport(t *testing.T, repo string) string {
	t.Helper()
	err := gitfixture.Write(repo, map[string]string{"base.xml": passingReport})
	if err == nil {
		err = gitfixture.Commit(repo, "dev", "report")
	}
	if err != nil {
		t.Fatal(err)
	}
	return repo
}

// TestTestGateReportWrittenByTheRun: reports the command writes pass,
// including one in a new directory. (A report in the workspace is refused
// at load: nodes/testdata/invalid.)
func TestTestGateReportWrittenByTheRun(t *testing.T) {
	repo := repoWithReport(t, nodetest.SeedRepo(t))
	for _, report := range []string{"/tmp/report.xml", "/tmp/out/deep/r.xml"} {
		t.Run(report, func(t *testing.T) {
			sum, a := nodetest.GateRun(t, repo, "", "type: test\nrun: "+nodetest.Quote("mkdir -p "+path.Dir(report)+" && "+writeReport+report)+"\nreport: "+report)
			mustPass(t, sum, a)
			if fmt.Sprint(a.Outputs["passed"]) != "2" {
				t.Fatalf("outputs: %v", a.Outputs)
			}
		})
	}
}
