package testgate_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sandgate/sandgate/nodes/internal/nodetest"
	"github.com/sandgate/sandgate/runtime"
)

func TestTestGateCannotBeFooled(t *testing.T) {
	repo := nodetest.SeedRepo(t)
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
			sum, a := nodetest.GateRun(t, repo, c.prep, c.gate)
			nodetest.MustFail(t, sum, a, c.want)
		})
	}
}

func TestTestGateFormats(t *testing.T) {
	repo := nodetest.SeedRepo(t)
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
			sum, a := nodetest.GateRun(t, repo, c.prep, c.gate)
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
