package nodes

import (
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/sandgate/sandgate/nodes/internal/feedback"
	"github.com/sandgate/sandgate/sandbox"
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
	// output fell short of, a package that ran no test).
	Problems []string
	// Packages are go test -json's packages in order of first appearance.
	Packages []GoPackage

	// passedTop holds "package\x00Test" of top-level tests that passed.
	passedTop map[string]bool
	// ranTop holds "package\x00Test" of top-level tests that started or
	// reported a result (go-json only).
	ranTop map[string]bool
	// top tallies each top-level test's results (go-json only).
	top map[string]tally
}

// TestFailure is one failing test.
type TestFailure struct {
	// Package is the Go package, for go test -json.
	Package string
	Name    string
	Output  string
}

// Total counts the tests that ran.
func (r *TestReport) Total() int { return r.Passed + r.Failed + r.Skipped }

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
				r.Failures = append(r.Failures, TestFailure{Name: name, Output: feedback.Tail(strings.TrimSpace(t.Message+"\n"+t.Body), 4096)})
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

// topLevelFailures lists the distinct "package\x00Test" keys of the
// top-level tests that failed (a failing subtest fails its parent).
func (r *TestReport) topLevelFailures() []string {
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

// maxReportBytes caps a report file read by the harness.
const maxReportBytes = 64 << 20

// readReport reads the report file at path (under /tmp in the box) once
// the test command has ended. A gate may not write in the workspace it
// judges, so reports live in the box's scratch space, which only the box
// sees; they are read with the system's own stat and cat, run by init
// while the gate holds the box alone and no process of the test command is
// left (its PID namespace died with it), so nothing can swap the file
// between the two. It must be a regular file written at or after since.
func readReport(ctx context.Context, w *Workspace, path string, since time.Time) ([]byte, error) {
	st, err := w.Command(ctx, sandbox.Command{Args: []string{"stat", "-c", "%F|%Y|%s", "--", path}, Timeout: time.Minute})
	if err != nil {
		return nil, err
	}
	if st.ExitCode != 0 {
		return nil, fmt.Errorf("report %s: the test command did not write it", path)
	}
	f := strings.Split(strings.TrimSpace(string(st.Output)), "|")
	if len(f) != 3 || !strings.HasPrefix(f[0], "regular") {
		return nil, fmt.Errorf("report %s is not a regular file (%s)", path, f[0])
	}
	mtime, err1 := strconv.ParseInt(f[1], 10, 64)
	size, err2 := strconv.ParseInt(f[2], 10, 64)
	if err1 != nil || err2 != nil {
		return nil, fmt.Errorf("report %s: unreadable stat output %q", path, st.Output)
	}
	// File times come from the kernel's coarse clock; allow it a second.
	if written := time.Unix(mtime, 0); written.Before(since.Add(-time.Second).Truncate(time.Second)) {
		return nil, fmt.Errorf("report %s was last written at %s, before this test run started (%s): it is not this run's",
			path, written.Format(time.RFC3339), since.Format(time.RFC3339))
	}
	if size > maxReportBytes {
		return nil, fmt.Errorf("report %s is larger than %d MiB", path, maxReportBytes>>20)
	}
	cat, err := w.Command(ctx, sandbox.Command{Args: []string{"cat", "--", path}, Timeout: time.Minute, OutputBytes: maxReportBytes + 1})
	if err != nil {
		return nil, err
	}
	if cat.ExitCode != 0 || cat.Dropped > 0 || int64(len(cat.Output)) != size {
		return nil, fmt.Errorf("report %s changed while it was read", path)
	}
	return cat.Output, nil
}
