package testgate

import (
	"slices"
	"testing"

	"github.com/sandgate/sandgate/nodes/testreport"
	"github.com/sandgate/sandgate/sandbox"
)

// TestPytestArgs: the canaries apply to a pytest command that runs whole
// directories, and never when it selects tests or stops at a failure.
func TestPytestArgs(t *testing.T) {
	for _, c := range []struct {
		args  []string
		paths []string
	}{
		{[]string{"python3", "-B", "-m", "pytest", "-q", "--junitxml=/tmp/r.xml", "."}, []string{"."}},
		{[]string{"pytest", "--junitxml", "/tmp/r.xml", "tests", "src/"}, []string{"/tmp/r.xml", "tests", "src"}},
		{[]string{"/usr/bin/pytest", "-p", "no:cacheprovider"}, []string{"no:cacheprovider"}},
		{[]string{".venv/bin/python", "-m", "pytest"}, []string{}},
		{[]string{"pytest", "-x", "."}, nil},
		{[]string{"pytest", "-k", "add", "."}, nil},
		{[]string{"pytest", "-kadd", "."}, nil},
		{[]string{"pytest", "--maxfail=1", "."}, nil},
		{[]string{"pytest", "tests/test_calc.py"}, nil},
		{[]string{"pytest", "tests/test_calc.py::test_add"}, nil},
		{[]string{"echo", "pytest"}, nil},
		{[]string{"go", "test", "./..."}, nil},
	} {
		paths, ok := pytestArgs(c.args)
		if ok != (c.paths != nil) || !slices.Equal(paths, c.paths) {
			t.Errorf("%q: paths %q, %v; want %q", c.args, paths, ok, c.paths)
		}
	}
}

// TestPyCanaryCheck: a report must show each canary once, as planted;
// the canaries leave the counts.
func TestPyCanaryCheck(t *testing.T) {
	c := &pyCanary{want: map[string]string{"test_f": "failed", "test_p": "passed"}}
	honest := func() *testreport.Report {
		return &testreport.Report{Passed: 2, Failed: 1,
			Failures: []testreport.Failure{{Name: "tests.test_x.test_f"}},
			Cases: []testreport.Case{{Classname: "tests.test_x", Name: "test_f", Outcome: "failed"},
				{Classname: "tests.test_x", Name: "test_p", Outcome: "passed"}, {Classname: "tests.test_a", Name: "test_a", Outcome: "passed"}}}
	}
	rep := honest()
	c.check(rep, &sandbox.Result{ExitCode: 1}, "")
	if rep.Passed != 1 || rep.Failed != 0 || len(rep.Failures) != 0 || len(rep.Problems) != 0 {
		t.Fatalf("honest report: %+v", rep)
	}
	rep = honest()
	c.check(rep, &sandbox.Result{ExitCode: 0}, "")
	if len(rep.Problems) != 1 {
		t.Fatalf("exit 0 with the failing canary run: %+v", rep.Problems)
	}
	rep = honest()
	rep.Cases[0].Outcome, rep.Failed, rep.Failures = "passed", 0, nil
	c.check(rep, &sandbox.Result{ExitCode: 1}, "")
	if len(rep.Problems) != 1 {
		t.Fatalf("the failing canary passed: %+v", rep.Problems)
	}
	rep = honest()
	rep.Cases = append(rep.Cases[2:], rep.Cases[2])
	c.check(rep, &sandbox.Result{ExitCode: 1}, "")
	if len(rep.Problems) != 2 {
		t.Fatalf("both canaries missing: %+v", rep.Problems)
	}
}
