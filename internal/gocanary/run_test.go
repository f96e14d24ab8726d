package gocanary

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sandgate/sandgate/internal/gocanary/gocanarytest"
	"github.com/sandgate/sandgate/sandbox"
)

// The tests here run go test on the host through the plan's two phases
// (the box's part is played by sh in a temporary module); the attack
// tests through every place that judges tests are in testgate, ci and
// eval.

const (
	buggy = "package calc\n\n// Add returns the sum of a and b.\nfunc Add(a, b int) int { return a - b }\n"
	fixed = "package calc\n\n// Add returns the sum of a and b.\nfunc Add(a, b int) int { return a + b }\n"
)

// calcTest is calc's test file: TestAdd fails while Add subtracts.
const calcTest = "package calc\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif got := Add(2, 3); got != 5 {\n\t\tt.Fatalf(\"Add(2, 3) = %d, want 5\", got)\n\t}\n}\n\n" +
	"func TestAddZero(t *testing.T) {\n\tif Add(0, 0) != 0 {\n\t\tt.Fatal(\"zero\")\n\t}\n}\n\nfunc TestAddSkipped(t *testing.T) { t.Skip(\"later\") }\n"

// module is calc (the seed repository of the node tests) with a package
// that imports it and one that does not.
func module(t *testing.T, add string, extra map[string]string) string {
	t.Helper()
	files := map[string]string{
		"go.mod":              "module calc\n\ngo 1.22\n",
		"calc.go":             add,
		"calc_test.go":        calcTest,
		"twice/twice.go":      "package twice\n\nimport \"calc\"\n\nfunc Twice(a int) int { return calc.Add(a, a) }\n",
		"twice/twice_test.go": "package twice_test\n\nimport (\n\t\"testing\"\n\n\t\"calc/twice\"\n)\n\nfunc TestTwice(t *testing.T) {\n\tif got := twice.Twice(2); got != 4 {\n\t\tt.Errorf(\"Twice(2) = %d, want 4\", got)\n\t}\n}\n",
		"lone/lone.go":        "package lone\n\nfunc One() int { return 1 }\n",
		"lone/lone_test.go":   "package lone\n\nimport \"testing\"\n\nfunc TestOne(t *testing.T) {\n\tif One() != 1 {\n\t\tt.Fatal(One())\n\t}\n}\n",
	}
	for k, v := range extra {
		files[k] = v
	}
	dir := t.TempDir()
	for name, src := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// localExec runs a command in dir on the host, as the box would.
func localExec(dir string) Exec { return gocanarytest.HostExec(dir) }

// run plans canaries for a change to the named files and runs
// go test -json ./... through both phases.
func run(t *testing.T, dir string, changed []string, o Options, args ...string) (*Plan, *sandbox.Result, []string) {
	t.Helper()
	// The go command's work directories go to a TMPDIR of the test's
	// own: the overlay reader walks go's temporary root, and the host's
	// /tmp holds every other build's (see TestAttackSpawnedProgramFindsNoSecrets).
	t.Setenv("TMPDIR", t.TempDir())
	o.Changed, o.Root = changed, dir
	if o.ExecPath == "" {
		o.ExecPath = filepath.Join(t.TempDir(), "exec")
	}
	if o.TmpDir == "" {
		o.TmpDir = t.TempDir()
	}
	if len(args) == 0 {
		args = []string{"go", "test", "-json", "./..."}
	}
	if o.Command == nil {
		o.Command = args // as the test gate plans it
	}
	p := NewPlan(DirTree(dir), o)
	raw, err := p.Run(context.Background(), localExec(dir), args, 5*time.Minute, 64<<20)
	if err != nil {
		t.Fatal(err)
	}
	res, problems := p.Decode(raw)
	t.Logf("exit %d, problems %q", res.ExitCode, problems)
	return p, res, problems
}

// results is each test's last result by package and name, and each
// package's, from a go test -json stream.
func results(out []byte) map[string]string {
	res := map[string]string{}
	for _, line := range strings.Split(string(out), "\n") {
		var e event
		if json.Unmarshal([]byte(line), &e) != nil || (e.Action != "pass" && e.Action != "fail" && e.Action != "skip") {
			continue
		}
		res[e.Package+" "+e.Test] = e.Action
	}
	return res
}

var both = Options{Failing: true, Passing: true}

func TestHonestChangePassesClean(t *testing.T) {
	dir := module(t, fixed, nil)
	o := both
	o.TmpDir = t.TempDir()
	p, res, problems := run(t, dir, []string{"calc.go"}, o)
	if len(problems) > 0 || res.ExitCode != 0 {
		t.Fatalf("an honest change: exit %d, problems %v\n%s", res.ExitCode, problems, res.Output)
	}
	got := results(res.Output)
	want := map[string]string{"calc TestAdd": "pass", "calc TestAddZero": "pass", "calc TestAddSkipped": "skip", "calc ": "pass",
		"calc/twice TestTwice": "pass", "calc/twice ": "pass", "calc/lone TestOne": "pass", "calc/lone ": "pass"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%q: %q, want %q", k, got[k], v)
		}
	}
	if len(got) != len(want) {
		t.Errorf("results %v, want exactly %v", got, want)
	}
	if d := p.Packages(); strings.Join(d, ",") != ".,twice" {
		t.Errorf("canaried %v, want the changed package and its importer", d)
	}
	for _, pp := range p.pkgs {
		secrets := []string{pp.failing, pp.passing, pp.passToken}
		for _, ts := range pp.seals {
			for _, tk := range ts {
				secrets = append(secrets, tk.pass, tk.skip)
			}
		}
		for _, s := range secrets {
			if s == "" || bytes.Contains(res.Output, []byte(s)) {
				t.Errorf("the clean report shows the secret %q (or it is empty)", s)
			}
		}
	}
	// Both phases remove their working directory (with the binaries and
	// the overlay) before they end.
	if left, err := os.ReadDir(o.TmpDir); err != nil || len(left) > 0 {
		t.Errorf("left behind in %s: %v %v", o.TmpDir, left, err)
	}
}

func TestBuggyChangeFailsUnforged(t *testing.T) {
	dir := module(t, buggy, nil)
	_, res, problems := run(t, dir, []string{"calc.go"}, both)
	got := results(res.Output)
	if len(problems) > 0 || got["calc TestAdd"] != "fail" || got["calc "] != "fail" || got["calc TestAddZero"] != "pass" || res.ExitCode != 1 {
		t.Fatalf("a plain failure: exit %d, problems %v, results %v", res.ExitCode, problems, got)
	}
	if got["calc/twice "] != "fail" {
		t.Errorf("twice imports the buggy Add and fails: %v", got)
	}
}

// TestNothingIsServedFromTheCache: no package's result comes from go
// test's cache, which the change's code could have written (see
// TestAttackPoisonedResultCache), not even on a second run.
func TestNothingIsServedFromTheCache(t *testing.T) {
	dir := module(t, fixed, nil)
	o := both
	o.ExecPath = filepath.Join(t.TempDir(), "exec")
	run(t, dir, []string{"calc.go"}, o)
	_, res, _ := run(t, dir, []string{"calc.go"}, o)
	if bytes.Contains(res.Output, []byte(`(cached)`)) {
		t.Errorf("a result was served from the cache on the second run:\n%s", res.Output)
	}
}

// TestForgersAreCaught: each forger, planted beside the bug, rewrites
// its package's report; the decoder must call it forged. Each forger has
// a copy of calc of its own (package fN: the bug, calc's tests and the
// forger) in one module, and one go test run serves them all: a forger
// acts on its own package's binary and report. A module and a run per
// forger (a go command, its compiles, vets and links each) took 44 of the
// package's 203 CPU-seconds (2026-12-07).
func TestForgersAreCaught(t *testing.T) {
	forgers, extra, changed := forgerModule()
	dir := module(t, fixed, extra)
	_, res, problems := run(t, dir, changed, both)
	for i, f := range forgers {
		t.Run(f.Name, func(t *testing.T) {
			want := fmt.Sprintf("report for package calc/f%d is forged", i)
			if !slices.ContainsFunc(problems, func(p string) bool { return strings.Contains(p, want) }) {
				t.Fatalf("not caught (package f%d): problems %v\n%s", i, problems, res.Output)
			}
		})
	}
}

// forgerModule is the files of a package fN for each forger N (calc's
// buggy Add and tests, and the forger) and the changed files among them.
func forgerModule() ([]gocanarytest.Forger, map[string]string, []string) {
	forgers := gocanarytest.Forgers("calc")
	extra := map[string]string{}
	var changed []string
	for i, f := range forgers {
		pkg := fmt.Sprintf("f%d", i)
		as := func(src string) string { return strings.Replace(src, "package calc", "package "+pkg, 1) }
		extra[pkg+"/calc.go"], extra[pkg+"/calc_test.go"] = as(buggy), as(calcTest)
		extra[pkg+"/"+f.File] = gocanarytest.Forgers(pkg)[i].Source
		changed = append(changed, pkg+"/calc.go", pkg+"/"+f.File)
	}
	return forgers, extra, changed
}

// TestOverlayReaderNeedsTheSources shows what the two phases are for: run
// in one go test with the overlay readable, the forger that lifts the
// seals' tokens from it passes the buggy TestAdd unseen.
func TestOverlayReaderNeedsTheSources(t *testing.T) {
	var reader gocanarytest.Forger
	for _, f := range gocanarytest.Forgers("calc") {
		if strings.Contains(f.Name, "overlay") {
			reader = f
		}
	}
	dir := module(t, buggy, map[string]string{reader.File: reader.Source})
	p := NewPlan(DirTree(dir), Options{Changed: []string{"calc.go"}, Root: dir})
	ov := map[string]string{}
	tmp, err := os.MkdirTemp("", "sandgate-canary-onephase-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	for rel, src := range p.overlay {
		f := filepath.Join(tmp, strings.ReplaceAll(rel, "/", "_"))
		os.WriteFile(f, src, 0o644)
		ov[filepath.Join(dir, rel)] = f
	}
	js, _ := json.Marshal(map[string]any{"Replace": ov})
	os.WriteFile(filepath.Join(tmp, "overlay.json"), js, 0o644)
	raw, err := localExec(dir)(context.Background(), sandbox.Command{Args: []string{"go", "test", "-json", "-overlay=" + filepath.Join(tmp, "overlay.json"), "."}, Timeout: 5 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	p.pkgs["."].importPath = "calc"
	res, problems := p.Decode(raw)
	if got := results(res.Output); len(problems) > 0 || got["calc TestAdd"] != "pass" {
		t.Fatalf("with the sources readable the reader should win (else this test proves nothing): problems %v, results %v", problems, got)
	}
}

// TestHiddenFilesAreGoneWhenTestsRun: held-out test files are compiled
// in and deleted before any binary runs.
func TestHiddenFilesAreGoneWhenTestsRun(t *testing.T) {
	probe := "package calc\n\nimport (\n\t\"os\"\n\t\"testing\"\n)\n\nfunc TestHeldOut(t *testing.T) {\n\tif _, err := os.Stat(\"calc_hidden_test.go\"); err == nil {\n\t\tt.Fatal(\"the held-out file is readable while tests run\")\n\t}\n}\n"
	dir := module(t, fixed, map[string]string{"calc_hidden_test.go": probe})
	_, res, problems := run(t, dir, []string{"calc_hidden_test.go"}, Options{Failing: true, Passing: true, Hide: []string{"calc_hidden_test.go"}})
	if got := results(res.Output); len(problems) > 0 || got["calc TestHeldOut"] != "pass" {
		t.Fatalf("problems %v, results %v\n%s", problems, got, res.Output)
	}
}

// TestDiskRunsLowDefers: when the box's disk cannot hold every stashed
// binary, the rest go to further rounds, each built and run alone, and
// the report is the same.
func TestDiskRunsLowDefers(t *testing.T) {
	dir := module(t, buggy, map[string]string{"twice/more_test.go": "package twice_test\n\nimport \"testing\"\n\nfunc TestMore(t *testing.T) {}\n"})
	for _, args := range [][]string{
		{"go", "test", "-json", "-count", "1", "./...", "-short"},
		{"sh", "-c", "go test -json -run 'Test.*' ./..."},
	} {
		o := Options{Changed: []string{"calc.go"}, Root: dir, ExecPath: filepath.Join(t.TempDir(), "exec"), Failing: true, Passing: true}
		if args[0] == "sh" {
			o.Failing, o.Passing = false, false // -run: seals only
		}
		p := NewPlan(DirTree(dir), o)
		p.reserve = 1 << 60 // the disk is always low: one binary a round
		raw, err := p.Run(context.Background(), localExec(dir), args, 5*time.Minute, 64<<20)
		if err != nil {
			t.Fatal(err)
		}
		res, problems := p.Decode(raw)
		got := results(res.Output)
		if len(problems) > 0 || got["calc TestAdd"] != "fail" || got["calc/twice TestMore"] != "pass" || got["calc/twice TestTwice"] != "fail" || got["calc/lone TestOne"] != "pass" {
			t.Fatalf("%v: problems %v, results %v\n%s", args, problems, got, res.Output)
		}
		if n := strings.Count(string(raw.Output), `"Action":"start","Package":"calc"}`); n != 1 {
			t.Errorf("%v: calc reported %d times", args, n)
		}
	}
}

func TestForPackages(t *testing.T) {
	for _, c := range []struct {
		in   []string
		want string
	}{
		{[]string{"go", "test", "-json", "-run", "X", "./...", "-count=1", "-args", "-v", "./x"}, "go test -json -run X -count=1 a b -args -v ./x"},
		{[]string{"go", "test", "-json", "-test.timeout", "5m", "./...", "-race"}, "go test -json -test.timeout 5m -race a b"},
		{[]string{"sh", "-c", "go test -json -run 'Test A.*' ./..."}, "go test -json -run Test A.* a b"},
		{[]string{"sh", "-c", "go test -json -run 'Test(A|B)' ./..."}, ""},
		{[]string{"go", "test", "-mystery", "./..."}, ""},
		{[]string{"go", "test", "-C", "sub", "./..."}, ""},
		{[]string{"sh", "-c", "go test $PKGS"}, ""},
	} {
		got, ok := forPackages(c.in, []string{"a", "b"})
		if s := strings.Join(got, " "); s != c.want || ok != (c.want != "") {
			t.Errorf("%q: %q %v, want %q", c.in, s, ok, c.want)
		}
	}
}

// TestCoverageSurvivesThePhases: with -cover, a stashed binary still
// reports its coverage (go test's coverage directory goes with it).
func TestCoverageSurvivesThePhases(t *testing.T) {
	dir := module(t, fixed, nil)
	_, res, problems := run(t, dir, []string{"calc.go"}, both, "go", "test", "-json", "-cover", "./...")
	if len(problems) > 0 || res.ExitCode != 0 || !bytes.Contains(res.Output, []byte("coverage: 100.0% of statements")) {
		t.Fatalf("exit %d, problems %v\n%s", res.ExitCode, problems, res.Output)
	}
}
