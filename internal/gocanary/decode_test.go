package gocanary

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/sandgate/sandgate/sandbox"
)

// stream writes go test -json events of package calc: each step is
// "action test output" ("" for none), output's \n added.
func stream(steps ...string) []byte {
	var b strings.Builder
	for _, s := range steps {
		f := strings.SplitN(s, " ", 3)
		for len(f) < 3 {
			f = append(f, "")
		}
		e := event{Action: f[0], Package: "calc", Test: f[1]}
		if f[2] != "" {
			e.Output = f[2] + "\n"
		}
		js, _ := json.Marshal(e)
		b.Write(append(js, '\n'))
	}
	return []byte(b.String())
}

// sealedPlan is a plan for package calc: canaries TestF (fails) and TestP
// (passes, token "1 2"), TestAdd sealed with pass "3 4" and skip "5 6".
func sealedPlan() *Plan {
	return &Plan{pkgs: map[string]*pkgPlan{".": {dir: ".", importPath: "calc", failing: "TestF", passing: "TestP", passToken: "1 2",
		seals: map[string][]tokens{"TestAdd": {{pass: "3 4", skip: "5 6"}}}}}}
}

// run, pass, fail, skip are one test's events.
func runs(test, result string, out ...string) []string {
	s := []string{"run " + test}
	for _, o := range out {
		s = append(s, "output "+test+" "+o)
	}
	return append(s, result+" "+test)
}

func steps(parts ...[]string) []string {
	var out []string
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// canariesOK are both canaries doing what they must.
var canariesOK = steps(runs("TestF", "fail", "    calc_test.go:9: Add(2, 3) = 7, want 5"), runs("TestP", "pass", "    calc_test.go:4: 1 2"))

// TestDecodeVerdicts: which reports are forged (moved here from eval's
// TestForgedVerdict with the canary it checked, and extended to seals).
func TestDecodeVerdicts(t *testing.T) {
	end := []string{"output  FAIL", "fail"}
	cases := []struct {
		name   string
		steps  []string
		forged string // a substring of the problem, "" for none
		result string // the package's result in the clean report
	}{
		{"canaries right, the test passed with its token", steps(canariesOK, runs("TestAdd", "pass", "    calc_test.go:3: 3 4"), end), "", "pass"},
		{"canaries right, the test failed", steps(canariesOK, runs("TestAdd", "fail", "    calc_test.go:5: Add(2, 3) = -1, want 5"), end), "", "fail"},
		{"the test skipped with its skip token", steps(canariesOK, runs("TestAdd", "skip", "    calc_test.go:3: 5 6"), end), "", "pass"},
		{"the failing canary reported passed", steps(runs("TestF", "pass"), runs("TestP", "pass", "1 2"), runs("TestAdd", "pass", "3 4"), []string{"output  PASS", "pass"}), "TestF, which always fails, was reported pass", "pass"},
		{"the failing canary reported skipped", steps(runs("TestF", "skip"), runs("TestP", "pass", "1 2"), runs("TestAdd", "fail"), end), "TestF, which always fails, was reported skip", "fail"},
		// Nothing ran (no build, or TestMain exits): the tests fail anyway.
		{"nothing ran", []string{"output  FAIL", "fail"}, "", "fail"},
		// A binary that ran and claims a pass or no test files ran no canary.
		{"no test ran, claimed passed", []string{"output  ok  \tcalc\t0.1s", "pass"}, "TestF, which always fails, was reported missing", "pass"},
		{"no test ran, claimed no test files", []string{"output  ?   \tcalc\t[no test files]", "skip"}, "TestF, which always fails, was reported missing", "skip"},
		// The canaries never ran, yet a test "passed": made up.
		{"canaries missing, the test passed", steps(runs("TestAdd", "pass", "3 4"), []string{"output  PASS", "pass"}), "TestF, which always fails, was reported missing", "pass"},
		{"the test passed without its token", steps(canariesOK, runs("TestAdd", "pass"), end), "TestAdd was reported passed without its seal", "fail"},
		{"the test passed with another test's token", steps(canariesOK, runs("TestAdd", "pass", "1 2"), end), "TestAdd was reported passed without its seal", "fail"},
		{"the test skipped with its pass token", steps(canariesOK, runs("TestAdd", "skip", "3 4"), end), "TestAdd was reported skipped without its seal", "fail"},
		{"the passing canary failed", steps(runs("TestF", "fail"), runs("TestP", "fail"), runs("TestAdd", "pass", "3 4"), end), "TestP, which always passes, was reported fail", "fail"},
		{"the passing canary dropped", steps(runs("TestF", "fail"), runs("TestAdd", "pass", "3 4"), end), "TestP, which always passes, was reported missing", "fail"},
		{"the passing canary passed without its token", steps(runs("TestF", "fail"), runs("TestP", "pass"), runs("TestAdd", "pass", "3 4"), end), "TestP, which always passes, was reported passed without its token", "fail"},
		{"two runs, two tokens", steps(canariesOK, runs("TestAdd", "pass", "3 4"), runs("TestAdd", "pass", "3 4"), end), "", "pass"},
		{"two passes, one token", steps(canariesOK, runs("TestAdd", "pass", "3 4"), runs("TestAdd", "pass"), end), "without its seal", "fail"},
		// Only the canary failed, but the binary died after the tests.
		{"a crash outside the tests", steps(canariesOK, runs("TestAdd", "pass", "3 4"), []string{"output  FAIL", "output  panic: late", "fail"}), "", "fail"},
		{"the test started and never ended", steps(canariesOK, []string{"run TestAdd"}, end), "", "fail"},
		{"a subtest failed", steps(canariesOK, []string{"run TestAdd", "run TestAdd/x", "fail TestAdd/x", "fail TestAdd"}, end), "", "fail"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res, problems := sealedPlan().Decode(&sandbox.Result{Output: stream(c.steps...), ExitCode: 1})
			got := strings.Join(problems, "\n")
			if (c.forged == "") != (got == "") || !strings.Contains(got, c.forged) {
				t.Fatalf("problems %q, want one saying %q", got, c.forged)
			}
			r := results(res.Output)
			if r["calc "] != c.result {
				t.Errorf("package result %q, want %q:\n%s", r["calc "], c.result, res.Output)
			}
			if c.forged == "" && (res.ExitCode == 0) != (c.result == "pass") {
				t.Errorf("exit %d with package result %s", res.ExitCode, c.result)
			}
			for _, secret := range []string{"TestF", "TestP", "1 2", "3 4", "5 6"} {
				if c.forged == "" && strings.Contains(string(res.Output), secret) {
					t.Errorf("the clean report still shows %q:\n%s", secret, res.Output)
				}
			}
		})
	}
}

// TestDecodeKeepsOtherPackages: a package without canaries (one the
// change does not reach) passes through as it was. The canaried calc,
// whose binary ran, has no report in this stream: that is the one
// problem (its report was taken away).
func TestDecodeKeepsOtherPackages(t *testing.T) {
	in := strings.ReplaceAll(string(stream(steps(runs("TestAdd", "fail", "boom"), []string{"output  FAIL", "fail"})...)), `"calc"`, `"calc/lone"`)
	res, problems := sealedPlan().Decode(&sandbox.Result{Output: []byte(in + "not json\n"), ExitCode: 1})
	if len(problems) != 1 || !strings.Contains(problems[0], "package calc is forged: its binary ran but the report holds no result for the package") ||
		string(res.Output) != in+"not json\n" || res.ExitCode != 1 {
		t.Fatalf("problems %v, exit %d, output changed:\n%s", problems, res.ExitCode, res.Output)
	}
}
