package testreport

import (
	"encoding/xml"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/sandgate/sandgate/nodes/internal/feedback"
)

// Report is what a test run counted from the runner's own output.
type Report struct {
	Format  string
	Passed  int
	Failed  int
	Skipped int
	// Failures are failing test names with their trimmed output.
	Failures []Failure
	// Problems are failures outside any test (build errors, a plan the
	// output fell short of, a package that ran no test).
	Problems []string
	// Packages are go test -json's packages in order of first appearance.
	Packages []GoPackage
	// Cases are a JUnit report's test cases with their outcomes, for
	// checks that look for tests of their own (the pytest canaries).
	Cases []Case

	// passedTop holds "package\x00Test" of top-level tests that passed.
	passedTop map[string]bool
	// ranTop holds "package\x00Test" of top-level tests that started or
	// reported a result (go-json only).
	ranTop map[string]bool
}

// Failure is one failing test.
type Failure struct {
	// Package is the Go package, for go test -json.
	Package string
	Name    string
	Output  string
}

// Case is one JUnit test case: its name (without the class) and its
// outcome, "passed", "failed" or "skipped".
type Case struct {
	Classname, Name, Outcome string
}

// Total counts the tests that ran.
func (r *Report) Total() int { return r.Passed + r.Failed + r.Skipped }

// Key names a top-level test of a package, as TopLevelFailures,
// PassedTop and RanTop take and give it.
func Key(pkg, test string) string { return pkg + "\x00" + test }

// SplitKey is Key's inverse.
func SplitKey(key string) (pkg, test string) {
	pkg, test, _ = strings.Cut(key, "\x00")
	return pkg, test
}

// PassedTop reports whether the top-level test key passed (go-json only).
func (r *Report) PassedTop(key string) bool { return r.passedTop[key] }

// RanTop reports whether the top-level test key started or reported a
// result (go-json only).
func (r *Report) RanTop(key string) bool { return r.ranTop[key] }

// ErrNoReport means the output holds no test report this node can read.
var ErrNoReport = errors.New("no test report in the output")

// junit covers testsuites/testsuite nesting as written by pytest, jest,
// vitest and Maven Surefire.
type junitSuite struct {
	Suites []junitSuite `xml:"testsuite"`
	Cases  []junitCase  `xml:"testcase"`
}

type junitCase struct {
	Name      string     `xml:"name,attr"`
	Classname string     `xml:"classname,attr"`
	Failure   *junitText `xml:"failure"`
	Error     *junitText `xml:"error"`
	Skipped   *junitText `xml:"skipped"`
	SystemOut string     `xml:"system-out"`
}

type junitText struct {
	Message string `xml:"message,attr"`
	Body    string `xml:",chardata"`
}

// ParseJUnit reads a JUnit XML report.
func ParseJUnit(data []byte) (*Report, error) {
	var root junitSuite
	if err := xml.Unmarshal(data, &root); err != nil {
		return nil, fmt.Errorf("junit report does not parse: %w", err)
	}
	r := &Report{Format: "junit"}
	var walk func(s junitSuite)
	walk = func(s junitSuite) {
		for _, c := range s.Cases {
			name := c.Name
			if c.Classname != "" {
				name = c.Classname + "." + c.Name
			}
			switch {
			case c.Failure != nil || c.Error != nil:
				t := c.Failure
				if t == nil {
					t = c.Error
				}
				r.Failed++
				r.Failures = append(r.Failures, Failure{Name: name, Output: feedback.Tail(strings.TrimSpace(t.Message+"\n"+t.Body), 4096)})
				r.Cases = append(r.Cases, Case{c.Classname, c.Name, "failed"})
			case c.Skipped != nil:
				r.Skipped++
				r.Cases = append(r.Cases, Case{c.Classname, c.Name, "skipped"})
			default:
				r.Passed++
				r.Cases = append(r.Cases, Case{c.Classname, c.Name, "passed"})
			}
		}
		for _, sub := range s.Suites {
			walk(sub)
		}
	}
	walk(root)
	return r, nil
}

var (
	tapPlanRE   = regexp.MustCompile(`^1\.\.(\d+)`)
	tapResultRE = regexp.MustCompile(`^(not ok|ok)\b\s*(\d+)?\s*-?\s*([^#]*)(#\s*(\w+).*)?$`)
)

// ParseTAP reads Test Anything Protocol output. Tests the plan announces
// but the output lacks count as failed: missing is not passing.
func ParseTAP(out string) (*Report, error) {
	r := &Report{Format: "tap"}
	plan, seen := -1, 0
	for _, line := range strings.Split(out, "\n") {
		line = strings.TrimSpace(line)
		if m := tapPlanRE.FindStringSubmatch(line); m != nil {
			plan, _ = strconv.Atoi(m[1])
			continue
		}
		m := tapResultRE.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		seen++
		directive := strings.ToUpper(m[5])
		switch {
		case directive == "SKIP":
			r.Skipped++
		case m[1] == "ok" || directive == "TODO":
			r.Passed++
		default:
			r.Failed++
			r.Failures = append(r.Failures, Failure{Name: strings.TrimSpace(m[3])})
		}
	}
	if seen == 0 && plan < 0 {
		return nil, ErrNoReport
	}
	if plan > seen {
		r.Failed += plan - seen
		r.Problems = append(r.Problems, fmt.Sprintf("the plan announced %d tests but only %d reported", plan, seen))
	}
	return r, nil
}

// Detect parses output in the named format, or guesses it.
func Detect(format, out string) (*Report, error) {
	switch format {
	case "go-json":
		return ParseGoTestJSON(out)
	case "tap":
		return ParseTAP(out)
	case "junit":
		return ParseJUnit([]byte(out))
	}
	if r, err := ParseGoTestJSON(out); err == nil {
		return r, nil
	}
	if strings.Contains(out, "<testsuite") {
		return ParseJUnit([]byte(out[strings.Index(out, "<"):]))
	}
	return ParseTAP(out)
}

// TopLevelFailures lists the distinct "package\x00Test" keys of the
// top-level tests that failed (a failing subtest fails its parent).
func (r *Report) TopLevelFailures() []string {
	set := map[string]bool{}
	for _, f := range r.Failures {
		name, _, _ := strings.Cut(f.Name, "/")
		set[f.Package+"\x00"+name] = true
	}
	out := make([]string, 0, len(set))
	for n := range set {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}
