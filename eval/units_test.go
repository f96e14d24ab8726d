package eval

import (
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sandgate/sandgate/internal/gitfixture"
	"github.com/sandgate/sandgate/internal/golden"
)

var update = flag.Bool("update", false, "rewrite golden files")

func TestParseTasksProblems(t *testing.T) {
	dir := t.TempDir()
	os.Mkdir(filepath.Join(dir, "h"), 0o755)
	os.Mkdir(filepath.Join(dir, "s"), 0o755)
	cases := []struct {
		name, src string
		want      []string
	}{
		{"not a mapping", "- a\n", []string{"t.yaml:1:1: want a mapping with a tasks list"}},
		{"no tasks", "other: 1\n", []string{"t.yaml:1:1: other: unknown field", "t.yaml:1:1: tasks: missing"}},
		{"every problem of a task", "tasks:\n  - id: a b\n    repo: nowhere\n    fail_to_pass: [\"not a test\"]\n    extra: 1\n", []string{
			`t.yaml:2:9: tasks[0].id: "a b": want letters`, "t.yaml:3:11: tasks[0].repo: nowhere: no such file or directory",
			`t.yaml:4:20: tasks[0].fail_to_pass[0]: "not a test" is not a Go test name`, "t.yaml:5:5: tasks[0].extra: unknown field",
			"t.yaml:2:5: tasks[0].hidden: missing"}},
		{"duplicate id", "tasks:\n  - {id: a, seed: h, hidden: h, fail_to_pass: [TestA]}\n  - {id: a, seed: h, hidden: h, fail_to_pass: [TestA]}\n",
			[]string{`t.yaml:3:5: tasks[1].id: "a" repeats the id of the task at line 2`}},
		{"repo and seed", "tasks:\n  - {id: a, repo: h, seed: h, hidden: h, fail_to_pass: []}\n",
			[]string{"tasks[0].seed: give repo or seed, not both", "tasks[0].fail_to_pass: empty"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseTasks(filepath.Join(dir, "t.yaml"), []byte(c.src))
			if err == nil {
				t.Fatal("accepted")
			}
			got := strings.ReplaceAll(err.Error(), dir+"/", "")
			for _, w := range c.want {
				if !strings.Contains(got, w) {
					t.Errorf("missing %q in:\n%s", w, got)
				}
			}
		})
	}
	set, err := ParseTasks(filepath.Join(dir, "t.yaml"), []byte("tasks:\n  - {id: a, seed: s, hidden: h, model: script:m.yaml, fail_to_pass: [TestA/sub]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if k := set.Tasks[0]; k.Commit != "HEAD" || k.Model != "script:"+filepath.Join(dir, "m.yaml") || k.Hidden != filepath.Join(dir, "h") {
		t.Errorf("task %+v: paths not resolved from the task file", k)
	}
}

func TestWithGateHidden(t *testing.T) {
	src, err := os.ReadFile("../blueprints/fix-failing-test.yaml")
	if err != nil {
		t.Fatal(err)
	}
	out, err := withGateHidden(src, "/x/gate")
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(out), `hidden: "/x/gate"`); n != 1 {
		t.Errorf("%d test gates got the held-out tests, want 1:\n%s", n, out)
	}
	if _, err := withGateHidden([]byte(bpSource), "/x"); err == nil || !strings.Contains(err.Error(), "no test gate") {
		t.Errorf("a blueprint without a test gate: %v", err)
	}
}

func sampleReport(partial bool) *Report {
	return newReport("bp.yaml", "tasks.yaml", []*TaskResult{
		{ID: "fix", Status: StatusResolved, Promoted: true, Resolved: true, Tokens: 1200, Cost: 0.01, DurationMS: 3000, NodeRuns: 10, Reason: "ok",
			Grade: []TestGrade{{Name: "TestA", Kind: "fail_to_pass", Before: TestFail, After: TestPass}}},
		{ID: "cheat", Status: StatusFalsePromotion, Promoted: true, FalsePromotion: true, Tokens: 800, DurationMS: 1000, NodeRuns: 8, Reason: "promoted, but TestA missing | after",
			Grade: []TestGrade{{Name: "TestA", Kind: "fail_to_pass", Before: TestFail, After: TestMissing}}},
		{ID: "stuck", Status: StatusHandedOff, Tokens: 500, DurationMS: 2000, NodeRuns: 7, CaughtBy: "test: 1 of 3 tests failed \x1b]0;owned\x07"},
		{ID: "bad", Status: StatusInvalid, Reason: "TestA passes on the base"},
	}, partial)
}

func TestReportMarkdownGolden(t *testing.T) {
	var b strings.Builder
	sampleReport(false).Markdown(&b)
	golden.Compare(t, "testdata/report.md", b.String(), *update)
}

func TestSummary(t *testing.T) {
	s := sampleReport(false).Summary
	if s.Measured != 3 || s.Invalid != 1 || s.FalsePromotions != 1 || s.MedianDurationMS != 2000 || s.Tokens != 2500 || s.Promoted != 2 {
		t.Errorf("%+v", s)
	}
	if s.ResolvedRate != 1.0/3 || s.FalsePromotionRate != 1.0/3 || s.HandoffRate != 1.0/3 {
		t.Errorf("rates %+v", s)
	}
}

func TestCompare(t *testing.T) {
	a := sampleReport(false)
	b := sampleReport(false)
	b.Tasks[0] = &TaskResult{ID: "fix", Status: StatusHandedOff}
	b.Tasks[2] = &TaskResult{ID: "stuck", Status: StatusResolved, Resolved: true, Promoted: true}
	b.Tasks = append(b.Tasks, &TaskResult{ID: "new", Status: StatusFailed})
	b.Summary = newReport("bp", "t", b.Tasks, false).Summary
	c := Compare(a, b)
	kinds := map[string]string{}
	for _, ch := range c.Changes {
		kinds[ch.ID] = ch.Kind
	}
	if kinds["stuck"] != "newly_resolved" || kinds["fix"] != "regressed" || kinds["new"] != "status_changed" || len(kinds) != 3 {
		t.Errorf("changes %+v", c.Changes)
	}
	if c.Deltas["tasks"] != 1 {
		t.Errorf("deltas %v", c.Deltas)
	}
	var sb strings.Builder
	c.Table(&sb)
	if !strings.Contains(sb.String(), "newly_resolved   stuck") {
		t.Errorf("table:\n%s", sb.String())
	}
	if _, err := json.Marshal(c); err != nil {
		t.Fatal(err)
	}
}

func TestImportSWEBench(t *testing.T) {
	dir := t.TempDir()
	repo := filepath.Join(dir, "repos", "acme__calc")
	if err := gitfixture.Seed(repo, map[string]string{"go.mod": "module acme/calc\n", "calc.go": "package calc\n", "calc_test.go": "package calc\n"}, "base"); err != nil {
		t.Fatal(err)
	}
	base, _ := gitfixture.Git(repo, "rev-parse", "HEAD")
	pyRepo := filepath.Join(dir, "repos", "py")
	if err := gitfixture.Seed(pyRepo, map[string]string{"setup.py": ""}, "base"); err != nil {
		t.Fatal(err)
	}
	pyBase, _ := gitfixture.Git(pyRepo, "rev-parse", "HEAD")
	patch := "diff --git a/calc_test.go b/calc_test.go\n--- a/calc_test.go\n+++ b/calc_test.go\n@@ -1 +1,3 @@\n package calc\n+\n+func TestNew(t *testing.T) {}\n" +
		"diff --git a/new_test.go b/new_test.go\nnew file mode 100644\n--- /dev/null\n+++ b/new_test.go\n@@ -0,0 +1 @@\n+package calc\n"
	lines := []map[string]any{
		{"instance_id": "acme__calc-1", "repo": "acme/calc", "base_commit": strings.TrimSpace(base), "problem_statement": "Add is wrong",
			"FAIL_TO_PASS": `["TestNew"]`, "PASS_TO_PASS": `[]`, "test_patch": patch},
		{"instance_id": "far-1", "repo": "other/far", "base_commit": "abc", "FAIL_TO_PASS": `["TestX"]`, "test_patch": patch},
		{"instance_id": "py-1", "repo": "x/py", "base_commit": strings.TrimSpace(pyBase), "FAIL_TO_PASS": `["test_x"]`, "test_patch": patch},
	}
	var src strings.Builder
	for _, l := range lines {
		b, _ := json.Marshal(l)
		src.Write(append(b, '\n'))
	}
	os.WriteFile(filepath.Join(dir, "in.jsonl"), []byte(src.String()), 0o644)
	out := filepath.Join(dir, "out")
	res, err := ImportSWEBench(filepath.Join(dir, "in.jsonl"), filepath.Join(dir, "repos"), out)
	if err != nil {
		t.Fatal(err)
	}
	if res.Imported != 1 || len(res.Skipped) != 2 || !strings.Contains(res.Skipped[0].Reason, "not available locally") || !strings.Contains(res.Skipped[1].Reason, "not a Go repository") {
		t.Fatalf("%+v", res)
	}
	got, _ := os.ReadFile(filepath.Join(out, "hidden", "acme__calc-1", "calc_test.go"))
	if !strings.Contains(string(got), "func TestNew") {
		t.Errorf("hidden calc_test.go is not the patched file: %q", got)
	}
	set, err := LoadTasks(res.File)
	if err != nil {
		t.Fatalf("the imported task file does not load: %v", err)
	}
	if k := set.Tasks[0]; k.Repo != repo || k.FailToPass[0] != "TestNew" || k.Inputs["task"] != "Add is wrong" {
		t.Errorf("%+v", k)
	}
}

// BenchmarkEvalOverheadPerTask is the harness's cost per task without the
// agent: seeding the repository, checking the base and grading a promoted
// change, each in a fresh box.
func BenchmarkEvalOverheadPerTask(b *testing.B) {
	needSandbox(b)
	run := promoting(map[string]string{"calc.go": fixed})
	for b.Loop() {
		rep, err := Run(context.Background(), &TaskSet{File: "t", Tasks: []*Task{calcTask("t")}},
			Options{Blueprint: "stub.yaml", Source: []byte(bpSource), Out: b.TempDir(), Run: run})
		if err != nil || rep.Tasks[0].Status != StatusResolved {
			b.Fatal(err, rep.Tasks[0].Reason)
		}
	}
}
