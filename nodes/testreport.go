package nodes

import (
	"bufio"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// TestReport is what a test run counted from the runner's own output.
type TestReport struct {
	Format  string
	Passed  int
	Failed  int
	Skipped int
	// Failures are failing test names with their trimmed output.
	Failures []TestFailure
	// Problems are failures outside any test (build errors, a plan the
	// output fell short of).
	Problems []string
}

// TestFailure is one failing test.
type TestFailure struct {
	Name   string
	Output string
}

// Total counts the tests that ran.
func (r *TestReport) Total() int { return r.Passed + r.Failed + r.Skipped }

// ErrNoReport means the output holds no test report this node can read.
var ErrNoReport = errors.New("no test report in the output")

// ParseGoTestJSON reads `go test -json` output.
func ParseGoTestJSON(out string) (*TestReport, error) {
	type event struct {
		Action, Package, Test, Output string
	}
	r := &TestReport{Format: "go-json"}
	outputs := map[string]*strings.Builder{}
	final := map[string]string{}
	var order []string
	parsed := 0
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "{") {
			continue
		}
		var e event
		if json.Unmarshal([]byte(line), &e) != nil || e.Action == "" {
			continue
		}
		parsed++
		key := e.Package + "\x00" + e.Test
		switch e.Action {
		case "output":
			if outputs[key] == nil {
				outputs[key] = &strings.Builder{}
			}
			outputs[key].WriteString(e.Output)
		case "pass", "fail", "skip":
			if _, seen := final[key]; !seen {
				order = append(order, key)
			}
			final[key] = e.Action
		}
	}
	if parsed == 0 {
		return nil, ErrNoReport
	}
	failedIn := map[string]bool{}
	for _, key := range order {
		pkg, test, _ := strings.Cut(key, "\x00")
		if test != "" && final[key] == "fail" {
			failedIn[pkg] = true
		}
	}
	for _, key := range order {
		pkg, test, _ := strings.Cut(key, "\x00")
		out := ""
		if b := outputs[key]; b != nil {
			out = b.String()
		}
		if test == "" {
			if final[key] == "fail" && !failedIn[pkg] {
				r.Problems = append(r.Problems, fmt.Sprintf("package %s failed outside any test:\n%s", pkg, tail(out, 4096)))
			}
			continue
		}
		switch final[key] {
		case "pass":
			r.Passed++
		case "skip":
			r.Skipped++
		case "fail":
			r.Failed++
			r.Failures = append(r.Failures, TestFailure{Name: test, Output: tail(out, 4096)})
		}
	}
	return r, nil
}

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
func ParseJUnit(data []byte) (*TestReport, error) {
	var root junitSuite
	if err := xml.Unmarshal(data, &root); err != nil {
		return nil, fmt.Errorf("junit report does not parse: %w", err)
	}
	r := &TestReport{Format: "junit"}
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
				r.Failures = append(r.Failures, TestFailure{Name: name, Output: tail(strings.TrimSpace(t.Message+"\n"+t.Body), 4096)})
			case c.Skipped != nil:
				r.Skipped++
			default:
				r.Passed++
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
func ParseTAP(out string) (*TestReport, error) {
	r := &TestReport{Format: "tap"}
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
			r.Failures = append(r.Failures, TestFailure{Name: strings.TrimSpace(m[3])})
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

// detectReport parses output in the named format, or guesses it.
func detectReport(format, out string) (*TestReport, error) {
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

// topLevelFailures lists the distinct top-level names of failing tests.
func (r *TestReport) topLevelFailures() []string {
	set := map[string]bool{}
	for _, f := range r.Failures {
		name, _, _ := strings.Cut(f.Name, "/")
		set[name] = true
	}
	out := make([]string, 0, len(set))
	for n := range set {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}
