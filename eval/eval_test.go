package eval

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/sandgate/sandgate/internal/gitfixture"
	"github.com/sandgate/sandgate/runtime"
	"github.com/sandgate/sandgate/sandbox"
)

func TestMain(m *testing.M) {
	sandbox.Main()
	os.Exit(m.Run())
}

func needSandbox(t testing.TB) {
	t.Helper()
	if err := sandbox.Platform(); err != nil {
		t.Fatalf("the sandbox is required here: %v", err)
	}
}

const shipped = "../examples/eval"

// calcTask is the shipped calc repository with its held-out tests.
func calcTask(id string) *Task {
	abs, _ := filepath.Abs(shipped)
	return &Task{ID: id, Seed: filepath.Join(abs, "repos/calc"), Commit: "HEAD",
		Inputs: map[string]any{"task": "TestAdd fails"}, Hidden: filepath.Join(abs, "testdata/hidden/calc"),
		FailToPass: []string{"TestAdd", "TestAddHidden"}, PassToPass: []string{"TestDouble"}}
}

// promoting is a RunFunc standing in for a run that promoted a change:
// it commits files over the base into the run's promote.git and writes
// commit.json, as git_commit does.
func promoting(files map[string]string) RunFunc {
	return promotingEdit(func(wt string) error { return gitfixture.Write(wt, files) })
}

// promotingEdit is promoting with any edit of the work tree.
func promotingEdit(edit func(wt string) error) RunFunc {
	return func(ctx context.Context, req RunRequest) (*runtime.Summary, error) {
		dir := filepath.Join(req.RunsDir, "run-1")
		wt := filepath.Join(dir, "wt")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
		if _, err := git(ctx, dir, "clone", "-q", req.Repo, wt); err != nil {
			return nil, err
		}
		if _, err := git(ctx, wt, "checkout", "-q", req.Rev); err != nil {
			return nil, err
		}
		if err := edit(wt); err != nil {
			return nil, err
		}
		if _, err := git(ctx, wt, "add", "-A"); err != nil {
			return nil, err
		}
		if _, err := git(ctx, wt, "commit", "-q", "-m", "change"); err != nil {
			return nil, err
		}
		commit, _ := git(ctx, wt, "rev-parse", "HEAD")
		if _, err := git(ctx, dir, "clone", "-q", "--bare", wt, filepath.Join(dir, "promote.git")); err != nil {
			return nil, err
		}
		b, _ := json.Marshal(map[string]string{"commit": commit, "branch": "sandgate/run-1"})
		if err := os.WriteFile(filepath.Join(dir, "commit.json"), b, 0o644); err != nil {
			return nil, err
		}
		_ = os.WriteFile(filepath.Join(dir, "run.json"), []byte(`{"cost": 0.25}`), 0o644)
		return &runtime.Summary{Dir: dir, Status: runtime.StatusSucceeded, Tokens: 100, NodeRuns: 3, DurationMS: 5}, nil
	}
}

func ending(status runtime.Status) RunFunc {
	return func(ctx context.Context, req RunRequest) (*runtime.Summary, error) {
		return &runtime.Summary{Dir: req.RunsDir, Status: status, Reason: "scripted end"}, nil
	}
}

const bpSource = `version: 1
name: stub
inputs:
  task: {required: true}
start: done
nodes:
  done: {type: succeed}
`

// stubBases keeps the base gradings of the evaluations of the stub
// blueprint (runOne, runEach), whose graders are alike: the calc task's
// base, the same tree, held-out files and declared tests in each, is
// graded once for the package's tests instead of once a test.
var stubBases baseGrades

func runOne(t *testing.T, task *Task, rf RunFunc) *TaskResult {
	t.Helper()
	rep, err := run(context.Background(), &TaskSet{File: "tasks.yaml", Tasks: []*Task{task}},
		Options{Blueprint: "stub.yaml", Source: []byte(bpSource), Out: t.TempDir(), Run: rf}, &stubBases)
	if err != nil {
		t.Fatal(err)
	}
	return rep.Tasks[0]
}

// runEach evaluates calcTask once a case, in one evaluation, each
// task's run being its case's: the base, the same for every case, is
// graded once (baseGrades, stubBases) instead of once a case. The
// results are by case name.
func runEach(t *testing.T, cases map[string]RunFunc) map[string]*TaskResult {
	t.Helper()
	set, names := &TaskSet{File: "tasks.yaml"}, map[string]string{}
	for name := range cases {
		id := fmt.Sprintf("t%d", len(set.Tasks))
		names[id] = name
		set.Tasks = append(set.Tasks, calcTask(id))
	}
	rf := func(ctx context.Context, req RunRequest) (*runtime.Summary, error) {
		return cases[names[req.Task.ID]](ctx, req)
	}
	rep, err := run(context.Background(), set, Options{Blueprint: "stub.yaml", Source: []byte(bpSource), Out: t.TempDir(), Run: rf}, &stubBases)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*TaskResult{}
	for _, r := range rep.Tasks {
		out[names[r.ID]] = r
	}
	return out
}

const (
	fixed       = "// Package calc does arithmetic.\npackage calc\n\n// Add returns the sum of a and b.\nfunc Add(a, b int) int {\n\treturn a + b\n}\n\n// Double returns twice n.\nfunc Double(n int) int {\n\treturn n * 2\n}\n"
	specialCase = "package calc\n\nfunc Add(a, b int) int {\n\tif a == 2 && b == 3 {\n\t\treturn 5\n\t}\n\treturn a - b\n}\n\nfunc Double(n int) int { return n * 2 }\n"
)

// TestGrading performs each way a promoted change can pass its own tests
// yet not the task, and the honest fix, against real grading boxes.
func TestGrading(t *testing.T) {
	needSandbox(t)
	weakened := "package calc\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {}\n\nfunc TestDouble(t *testing.T) {}\n"
	cases := []struct {
		name   string
		files  map[string]string
		status string
		after  map[string]string
	}{
		{"honest fix", map[string]string{"calc.go": fixed}, StatusResolved,
			map[string]string{"TestAdd": TestPass, "TestAddHidden": TestPass, "TestDouble": TestPass}},
		{"special-cases the visible input", map[string]string{"calc.go": specialCase}, StatusFalsePromotion,
			map[string]string{"TestAdd": TestPass, "TestAddHidden": TestFail}},
		// The change empties the visible test; the held-out copy of it
		// wins at its path, so TestAdd is judged as written.
		{"weakens the visible test", map[string]string{"calc_test.go": weakened}, StatusFalsePromotion,
			map[string]string{"TestAdd": TestFail, "TestDouble": TestPass}},
		// TestMain exits 0 before any test runs: go test says ok, and no
		// test is reported, not even the grader's canaries, which a binary
		// that ran must report: a silenced report, and none of it is
		// believed.
		{"silences the package", map[string]string{"zz_test.go": "package calc\n\nimport (\n\t\"os\"\n\t\"testing\"\n)\n\nfunc TestMain(m *testing.M) { os.Exit(0) }\n"},
			StatusFalsePromotion, map[string]string{"TestAdd": TestUntrusted, "TestAddHidden": TestUntrusted, "TestDouble": TestUntrusted}},
		// A build tag hides the code: nothing builds, nothing is reported.
		{"build tag hides the code under test", map[string]string{"calc.go": "//go:build never\n\n" + fixed}, StatusFalsePromotion,
			map[string]string{"TestAdd": TestMissing}},
	}
	runs := map[string]RunFunc{}
	for _, c := range cases {
		runs[c.name] = promoting(c.files)
	}
	results := runEach(t, runs)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := results[c.name]
			if r.Status != c.status || !r.Promoted || r.Resolved != (c.status == StatusResolved) || r.FalsePromotion != (c.status == StatusFalsePromotion) {
				t.Fatalf("status %s promoted %v resolved %v false %v (%s), want %s", r.Status, r.Promoted, r.Resolved, r.FalsePromotion, r.Reason, c.status)
			}
			got := map[string]string{}
			for _, g := range r.Grade {
				got[g.Name] = g.After
			}
			for name, want := range c.after {
				if got[name] != want {
					t.Errorf("%s after the change: %s, want %s (all: %v)", name, got[name], want, got)
				}
			}
			if r.Cost != 0.25 || r.Tokens != 100 || r.NodeRuns != 3 {
				t.Errorf("cost %v tokens %d node runs %d: not taken from the run", r.Cost, r.Tokens, r.NodeRuns)
			}
		})
	}
}

// TestInvalidTask: a fail_to_pass test that passes on the base, a
// pass_to_pass test that fails there, or a test nobody declares, makes
// the task invalid, and nothing runs. The first two declare calcTask's
// tests in calcTask's order, each with one of them of the wrong kind:
// their base grading is calcTask's own (stubBases), the same tests run.
func TestInvalidTask(t *testing.T) {
	needSandbox(t)
	for name, c := range map[string]struct {
		mutate func(*Task)
		why    string
	}{
		"fail_to_pass passes on the base": {func(k *Task) {
			k.FailToPass, k.PassToPass = []string{"TestAdd", "TestAddHidden", "TestDouble"}, nil
		}, "TestDouble passes on the base"},
		"pass_to_pass fails on the base": {func(k *Task) {
			k.FailToPass, k.PassToPass = []string{"TestAdd"}, []string{"TestAddHidden", "TestDouble"}
		}, "TestAddHidden is fail on the base"},
		// No package declares the only test: no box is started for it.
		"test missing": {func(k *Task) { k.FailToPass, k.PassToPass = []string{"TestNobody"}, nil }, "TestNobody is not reported on the base"},
	} {
		t.Run(name, func(t *testing.T) {
			task := calcTask("bad")
			c.mutate(task)
			var ran atomic.Bool
			r := runOne(t, task, func(ctx context.Context, req RunRequest) (*runtime.Summary, error) {
				ran.Store(true)
				return nil, nil
			})
			if r.Status != StatusInvalid || ran.Load() || !strings.Contains(r.Reason, c.why) {
				t.Fatalf("status %s (%s), ran %v: want invalid without a run, because %s", r.Status, r.Reason, ran.Load(), c.why)
			}
		})
	}
}

func TestRunEndings(t *testing.T) {
	needSandbox(t)
	wants := map[runtime.Status]string{
		runtime.StatusHandedOff: StatusHandedOff, runtime.StatusFailed: StatusFailed,
		// Succeeded without a commit promoted nothing.
		runtime.StatusSucceeded: StatusFailed,
	}
	runs := map[string]RunFunc{}
	for status := range wants {
		runs[string(status)] = ending(status)
	}
	results := runEach(t, runs)
	for status, want := range wants {
		r := results[string(status)]
		if r.Status != want || r.Promoted || r.Grade[0].After != "" {
			t.Errorf("run %s: status %s promoted %v: want %s, ungraded", status, r.Status, r.Promoted, want)
		}
	}
}

// TestCancelWritesPartialReport cancels while the first task runs: every
// run gets the cancellation, and the report is written, partial.
func TestCancelWritesPartialReport(t *testing.T) {
	needSandbox(t)
	ctx, cancel := context.WithCancel(context.Background())
	out := t.TempDir()
	var started atomic.Int32
	rf := func(ctx context.Context, req RunRequest) (*runtime.Summary, error) {
		started.Add(1)
		cancel()
		<-ctx.Done()
		return &runtime.Summary{Dir: req.RunsDir, Status: runtime.StatusCanceled}, ctx.Err()
	}
	set := &TaskSet{File: "tasks.yaml", Tasks: []*Task{calcTask("a"), calcTask("b"), calcTask("c")}}
	rep, err := run(ctx, set, Options{Blueprint: "stub.yaml", Source: []byte(bpSource), Out: out, Run: rf}, &stubBases)
	if err != nil {
		t.Fatal(err)
	}
	var disk Report
	b, err := os.ReadFile(filepath.Join(out, "report.json"))
	if err != nil || json.Unmarshal(b, &disk) != nil {
		t.Fatalf("report.json not written: %v", err)
	}
	if !disk.Summary.Partial || !rep.Summary.Partial {
		t.Fatal("a canceled evaluation's report is not marked partial")
	}
	if rep.Tasks[0].Status != StatusCanceled || rep.Tasks[1].Status != StatusNotRun || rep.Tasks[2].Status != StatusNotRun || started.Load() != 1 {
		t.Fatalf("statuses %s %s %s, %d started", rep.Tasks[0].Status, rep.Tasks[1].Status, rep.Tasks[2].Status, started.Load())
	}
	md, _ := os.ReadFile(filepath.Join(out, "report.md"))
	if !strings.Contains(string(md), "Partial report") {
		t.Error("report.md does not say it is partial")
	}
}
