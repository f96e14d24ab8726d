package testreport

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/sandgate/sandgate/nodes/internal/feedback"
)

// GoPackage is what `go test -json` said about one package.
type GoPackage struct {
	Path string
	// Result is the package's final action: pass, fail or skip; empty when
	// the stream ended before go test reported one.
	Result                  string
	Passed, Failed, Skipped int
	// NoTestFiles means go test found no test files and ran no binary:
	// its only output is go's own "[no test files]" line.
	NoTestFiles bool
	// NoTestsToRun means the test binary said no test matched.
	NoTestsToRun bool

	outLines    int
	noFilesLine bool
	failedBuild string
	out         tailBuffer
}

// goEvent is one line of go test -json (cmd/test2json's TestEvent plus
// the build events of Go 1.24).
type goEvent struct {
	Action, Package, Test, Output, ImportPath, FailedBuild string
}

// goTest is one test's state while the stream is read. With -count=N a
// test runs N times under one name: each result counts, a failure sticks.
type goTest struct {
	pkg, name              string
	runs, pass, fail, skip int
	out                    tailBuffer
}

// goStream accumulates a go test -json stream. Only bounded tails of
// output are kept, so a stream of any length is counted in full.
type goStream struct {
	pkgs      map[string]*GoPackage
	pkgOrder  []*GoPackage
	tests     map[string]*goTest
	testOrder []*goTest
	builds    map[string]*tailBuffer
	parsed    int
	damaged   int
}

// ParseGoTestJSON reads `go test -json` output. Every line is read, however
// long the stream; a test that started but never reported a result counts
// as failed, and a package whose result never came is a problem.
func ParseGoTestJSON(out string) (*Report, error) {
	s := &goStream{pkgs: map[string]*GoPackage{}, tests: map[string]*goTest{}, builds: map[string]*tailBuffer{}}
	for len(out) > 0 {
		line := out
		if i := strings.IndexByte(out, '\n'); i >= 0 {
			line, out = out[:i], out[i+1:]
		} else {
			out = ""
		}
		s.line(line)
	}
	if s.parsed == 0 {
		return nil, ErrNoReport
	}
	return s.report(), nil
}

func (s *goStream) line(line string) {
	if !strings.HasPrefix(line, "{") {
		return
	}
	var e goEvent
	if err := json.Unmarshal([]byte(line), &e); err != nil || e.Action == "" {
		if strings.Contains(line, `"Action"`) {
			s.damaged++ // a torn event could have been a failure
		}
		return
	}
	s.parsed++
	switch {
	case e.Package == "" && e.ImportPath != "":
		if e.Action == "build-output" {
			s.buildOut(e.ImportPath).write(e.Output)
		}
	case e.Package == "":
	case e.Test == "":
		s.pkgEvent(s.pkg(e.Package), e)
	default:
		s.testEvent(e)
	}
}

func (s *goStream) pkg(path string) *GoPackage {
	p := s.pkgs[path]
	if p == nil {
		p = &GoPackage{Path: path}
		s.pkgs[path] = p
		s.pkgOrder = append(s.pkgOrder, p)
	}
	return p
}

func (s *goStream) buildOut(id string) *tailBuffer {
	b := s.builds[id]
	if b == nil {
		b = &tailBuffer{}
		s.builds[id] = b
	}
	return b
}

func (s *goStream) pkgEvent(p *GoPackage, e goEvent) {
	switch e.Action {
	case "output":
		p.out.write(e.Output)
		p.outLines++
		if e.Output == "?   \t"+p.Path+"\t[no test files]\n" {
			p.noFilesLine = true
		}
		if strings.Contains(e.Output, "no tests to run") {
			p.NoTestsToRun = true
		}
	case "pass", "fail", "skip":
		p.Result, p.failedBuild = e.Action, e.FailedBuild
	}
}

func (s *goStream) testEvent(e goEvent) {
	s.pkg(e.Package)
	key := e.Package + "\x00" + e.Test
	t := s.tests[key]
	if t == nil {
		t = &goTest{pkg: e.Package, name: e.Test}
		s.tests[key] = t
		s.testOrder = append(s.testOrder, t)
	}
	switch e.Action {
	case "run":
		t.runs++
	case "output":
		t.out.write(e.Output)
	case "pass", "skip":
		if e.Action == "pass" {
			t.pass++
		} else {
			t.skip++
		}
		if t.fail == 0 {
			t.out = tailBuffer{} // a passing test's output is not needed
		}
	case "fail":
		t.fail++
	}
}

func (s *goStream) report() *Report {
	r := &Report{Format: "go-json", passedTop: map[string]bool{}, ranTop: map[string]bool{}}
	for _, t := range s.testOrder {
		p := s.pkgs[t.pkg]
		// A test that started and never reported a result counts as failed.
		lost := max(t.runs-t.pass-t.fail-t.skip, 0)
		r.Passed, r.Skipped, r.Failed = r.Passed+t.pass, r.Skipped+t.skip, r.Failed+t.fail+lost
		p.Passed, p.Skipped, p.Failed = p.Passed+t.pass, p.Skipped+t.skip, p.Failed+t.fail+lost
		if !strings.Contains(t.name, "/") && t.runs+t.pass+t.fail+t.skip > 0 {
			r.ranTop[t.pkg+"\x00"+t.name] = true
		}
		switch {
		case t.fail+lost > 0:
			out := t.out.String()
			if lost > 0 {
				out += "\n[sandgate: the test started but never reported a result]"
			}
			r.Failures = append(r.Failures, Failure{Package: t.pkg, Name: t.name, Output: out})
		case t.pass > 0 && !strings.Contains(t.name, "/"):
			r.passedTop[t.pkg+"\x00"+t.name] = true
		}
	}
	for _, p := range s.pkgOrder {
		p.NoTestFiles = p.Result == "skip" && p.noFilesLine && p.outLines == 1
		switch {
		case p.Result == "":
			r.Problems = append(r.Problems, fmt.Sprintf("package %s: the output ended before go test reported its result (killed, timed out or cut off):\n%s", p.Path, p.out.String()))
		case p.Result == "fail" && p.Failed == 0:
			out := p.out.String()
			if b := s.builds[p.failedBuild]; b != nil {
				out = b.String() + out
			}
			r.Problems = append(r.Problems, fmt.Sprintf("package %s failed outside any test:\n%s", p.Path, out))
		}
		r.Packages = append(r.Packages, *p)
	}
	if s.damaged > 0 {
		r.Problems = append(r.Problems, fmt.Sprintf("%d line(s) of the go test -json stream could not be read; a damaged stream is not evidence", s.damaged))
	}
	return r
}

// CheckPackages fails every package that has test files but ran no test
// (it passed with no test events, said "no tests to run", skipped all its
// tests, or claimed "[no test files]" after its test binary ran), unless
// allow names it. Without this, one package's tests keep the total above
// zero while another package's tests are silenced.
func (r *Report) CheckPackages(allow []string) {
	for _, p := range r.Packages {
		if p.NoTestFiles || p.Passed+p.Failed > 0 || (p.Result != "pass" && p.Result != "skip") || allowedPackage(allow, p.Path) {
			continue
		}
		var why string
		switch {
		case p.Result == "skip":
			why = "go test reported it skipped as having no test files, but its test binary ran and printed more than go's own \"[no test files]\" line"
		case p.NoTestsToRun:
			why = "it has test files but ran no test (\"no tests to run\")"
		case p.Skipped > 0:
			why = fmt.Sprintf("all %d of its tests were skipped", p.Skipped)
		default:
			why = "it passed without reporting any test: its test binary exited before running tests (an init or TestMain that calls os.Exit does this)"
		}
		r.Problems = append(r.Problems, fmt.Sprintf("package %s ran no test: %s; list it under allow_no_tests if that is intended", p.Path, why))
	}
}

// allowedPackage matches an import path against allow_no_tests entries:
// exact paths, or a prefix ending in /... for a subtree.
func allowedPackage(allow []string, path string) bool {
	for _, a := range allow {
		if prefix, ok := strings.CutSuffix(a, "/..."); ok {
			if path == prefix || strings.HasPrefix(path, prefix+"/") {
				return true
			}
		} else if a == path {
			return true
		}
	}
	return false
}

// keepOutput is how much of one test's or package's output is kept.
const keepOutput = 8 << 10

// tailBuffer keeps the last keepOutput bytes written to it (amortized).
type tailBuffer struct {
	b   []byte
	cut bool
}

func (t *tailBuffer) write(s string) {
	t.b = append(t.b, s...)
	if len(t.b) > 4*keepOutput {
		t.b, t.cut = t.b[:copy(t.b, t.b[len(t.b)-keepOutput:])], true
	}
}

func (t *tailBuffer) String() string {
	s := feedback.Tail(string(t.b), 4096)
	if t.cut && !strings.HasPrefix(s, "…") {
		s = "…\n" + s
	}
	return s
}
