package nodes_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sandgate/sandgate/runtime"
)

// gateRun runs a one-gate blueprint after an optional shell step and
// returns the summary and the gate's last attempt.
func gateRun(t *testing.T, repo, prep, gateYAML string) (*runtime.Summary, runtime.AttemptInfo) {
	t.Helper()
	if prep == "" {
		prep = "true"
	}
	src := "version: 1\nname: g\nstart: prep\nnodes:\n  prep: {type: shell, run: " + quote(prep) + ", next: gate}\n  gate:\n" +
		indent(gateYAML) + "    on_pass: ok\n    on_fail: no\n  ok: {type: succeed}\n  no: {type: fail, reason: gate failed}\n"
	sum := newHarness(t, repo).run(t, src, nil)
	var last runtime.AttemptInfo
	for _, a := range sum.Attempts {
		if a.Node == "gate" {
			last = a
		}
	}
	return sum, last
}

func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

func indent(s string) string {
	var b strings.Builder
	for _, l := range strings.Split(strings.TrimRight(s, "\n"), "\n") {
		b.WriteString("    " + l + "\n")
	}
	return b.String()
}

func TestTestGateCannotBeFooled(t *testing.T) {
	repo := seedRepo(t)
	cases := []struct {
		name, prep, gate, want string
	}{
		{"failing test", "", "type: test\nrun: go test -json ./...", "Add(2, 3) = -1, want 5"},
		{"zero tests", "rm calc_test.go", "type: test\nrun: go test -json ./...", "No test ran"},
		{"unparseable report", "", "type: test\nrun: echo all good", "no report sandgate can read"},
		{"plain go test output", "", "type: test\nrun: go test ./...", "no report sandgate can read"},
		{"build failure", "echo 'func broken(' >> calc.go", "type: test\nrun: go test -json ./...", "failed outside any test"},
		{"tap plan not met", "", "type: test\nformat: tap\nrun: printf '1..3\\nok 1 - a\\nok 2 - b\\n'", "plan announced 3 tests but only 2"},
		{"nonzero exit without failures", "sed -i 's/a - b/a + b/' calc.go", "type: test\nrun: go test -json ./... ; exit 3", "exited with 3 although no test failed"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sum, a := gateRun(t, repo, c.prep, c.gate)
			mustFail(t, sum, a, c.want)
		})
	}
}

func TestTestGateFormats(t *testing.T) {
	repo := seedRepo(t)
	js := "const test = require('node:test');\nconst assert = require('node:assert');\ntest('adds', () => assert.strictEqual(1 + 1, 2));\ntest('skipped', { skip: true }, () => {});\n"
	cases := []struct{ name, prep, gate string }{
		{"go test -json", "sed -i 's/a - b/a + b/' calc.go", "type: test\nrun: go test -json ./..."},
		{"junit from node --test", "printf " + shellArg(js) + " > add.test.js", "type: test\nrun: node --test --test-reporter=junit --test-reporter-destination=/tmp/report.xml add.test.js\nreport: /tmp/report.xml"},
		{"tap from prove", "mkdir -p t && printf 'print \"1..2\\\\nok 1 - one\\\\nok 2 - two\\\\n\";' > t/a.t", "type: test\nformat: tap\nrun: prove -v t/a.t"},
	}
	if _, err := exec.LookPath("node"); err != nil {
		cases = cases[:1]
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sum, a := gateRun(t, repo, c.prep, c.gate)
			if sum.Status != runtime.StatusSucceeded {
				logs, _ := filepath.Glob(filepath.Join(sum.Dir, "nodes", "gate", "*", "*.log"))
				var out string
				for _, l := range logs {
					b, _ := os.ReadFile(l)
					out += string(b)
				}
				t.Fatalf("run %s (%s), feedback:\n%s\nlogs:\n%s", sum.Status, sum.Reason, a.Feedback, out)
			}
		})
	}
}

func shellArg(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func TestProtectEditedTests(t *testing.T) {
	repo := seedRepo(t)
	cheat := "sed -i 's/want 5/want -1/; s/got != 5/got != -1/' calc_test.go"
	sum, a := gateRun(t, repo, cheat, "type: protect\npaths: ['*_test.go', '.github/**']")
	if sum.Status != runtime.StatusFailed || !strings.Contains(a.Feedback, "calc_test.go") {
		t.Fatalf("editing a test was not caught: %s %q", sum.Status, a.Feedback)
	}
	// With revert, the edit is undone and the real test fails again.
	src := `version: 1
name: g
start: cheat
nodes:
  cheat: {type: shell, run: "` + cheat + `", next: guard}
  guard: {type: protect, paths: ["*_test.go"], action: revert, next: test}
  test: {type: test, run: go test -json ./..., on_pass: ok, on_fail: no}
  ok: {type: succeed}
  no: {type: fail}
`
	sum = newHarness(t, repo).run(t, src, nil)
	if sum.Status != runtime.StatusFailed {
		t.Fatalf("the reverted test should fail again; run %s", sum.Status)
	}
}

func TestPromotionRefusesWithoutPassingVerdict(t *testing.T) {
	repo := seedRepo(t)
	cases := map[string]string{
		"no gate ran": `  fix: {type: shell, run: "sed -i 's/a - b/a + b/' calc.go", next: commit}`,
		"a gate failed": `  fix: {type: shell, run: "true", next: test}
  test: {type: test, run: go test -json ./..., next: commit}`,
		"changed after the gates": `  fix: {type: shell, run: "sed -i 's/a - b/a + b/' calc.go", next: test}
  test: {type: test, run: go test -json ./..., next: sneak}
  sneak: {type: shell, run: "echo 'func Evil() {}' >> calc.go", next: commit}`,
	}
	for name, body := range cases {
		t.Run(name, func(t *testing.T) {
			src := "version: 1\nname: p\nstart: fix\nnodes:\n" + body + "\n  commit: {type: git_commit, next: done}\n  done: {type: succeed}\n"
			sum := newHarness(t, repo).run(t, src, nil)
			if sum.Status != runtime.StatusHandedOff || !strings.Contains(sum.Reason, "asked for a person") {
				t.Fatalf("commit was not refused: %s (%s)", sum.Status, sum.Reason)
			}
			if _, err := os.Stat(filepath.Join(sum.Dir, "commit.json")); err == nil {
				t.Fatal("a commit was made")
			}
		})
	}
}
