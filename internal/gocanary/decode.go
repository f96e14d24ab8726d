package gocanary

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/sandgate/sandgate/sandbox"
)

// event is one line of go test -json (cmd/test2json's TestEvent and the
// build events of Go 1.24); fields are kept so a line can be written back.
type event struct {
	Time        string   `json:",omitempty"`
	Action      string   `json:",omitempty"`
	Package     string   `json:",omitempty"`
	Test        string   `json:",omitempty"`
	Elapsed     *float64 `json:",omitempty"`
	Output      string   `json:",omitempty"`
	ImportPath  string   `json:",omitempty"`
	FailedBuild string   `json:",omitempty"`
}

// crashMarks start package-level lines that mean the binary died outside
// any test: such a package stays failed though only canaries failed.
var crashMarks = []string{"panic: ", "fatal error: ", "*** Test killed", "[signal "}

// pkgState is what the stream showed of one canaried package.
type pkgState struct {
	plan                    *pkgPlan
	tests                   bool // any test event
	failRuns, failFails     int
	failOther               []string
	passOK                  int
	passBad                 []string
	pending, pendingSkip    map[string]int // tokens logged, not yet claimed
	runs, ended             map[string]int // top-level test runs and results
	realFails               int
	crashed, summary, fixed bool
	result                  string
	unearned                []string
	// listed are the tests the binary holds (nil: not known), sel the
	// ones the command runs, ranTop those with a result in the report.
	listed   map[string]bool
	unlisted bool
	sel      selection
	ranTop   map[string]bool
}

// Decode checks the report of a run against the plan's secrets and
// returns it as plain go test would have printed it: the canaries and
// the seal lines taken out, and a package that failed only because of its
// failing canary reported passed. problems name every package whose
// report was forged: a sealed test that passed or skipped without its
// token, a failing canary that did not fail, or a passing canary that
// did not pass with its token (one missing from a package that ran
// tests counts too).
func (p *Plan) Decode(res *sandbox.Result) (*sandbox.Result, []string) {
	states := map[string]*pkgState{}
	for _, pp := range p.pkgs {
		if pp.importPath != "" {
			states[pp.importPath] = &pkgState{plan: pp, pending: map[string]int{}, pendingSkip: map[string]int{}, runs: map[string]int{}, ended: map[string]int{},
				listed: p.listed[pp.importPath], unlisted: slices.Contains(p.unlisted, pp.importPath), sel: p.sel, ranTop: map[string]bool{}}
		}
	}
	// Each line is parsed once (a 13 MB report on prometheus took 0.8 s of
	// CPU parsed twice, a quarter of the canary's cost over the command):
	// evs[i] is line i's event, nil for a line that is not one.
	lines := bytes.SplitAfter(res.Output, []byte("\n"))
	evs := make([]*event, len(lines))
	for i, line := range lines {
		e := new(event)
		if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, e) != nil {
			continue
		}
		evs[i] = e
		if s := states[e.Package]; s != nil {
			s.observe(*e)
		}
	}
	var problems []string
	for _, pkg := range p.stray {
		problems = append(problems, fmt.Sprintf("package %s holds the change's code and ran, but the harness read the command as not testing it and did not seal it; none of its results is believed", pkg))
	}
	for _, pkg := range p.changed {
		problems = append(problems, fmt.Sprintf("the test binary of package %s, which the change cannot reach, or its arguments, changed between its build and its run, while the change's code ran; it was not run", pkg))
	}
	for _, pkg := range slices.Sorted(maps.Keys(states)) {
		if why := states[pkg].verdict(); why != "" {
			problems = append(problems, fmt.Sprintf("the test binary's report for package %s is forged: %s; none of the package's results is believed", pkg, why))
		}
	}
	out := make([]byte, 0, len(res.Output))
	failed := false
	for i, line := range lines {
		e := evs[i]
		if e == nil {
			out = append(out, line...)
			continue
		}
		keep, changed := states[e.Package].rewrite(e)
		if !keep {
			continue
		}
		failed = failed || e.Action == "fail"
		if !changed {
			out = append(out, line...)
			continue
		}
		b, _ := json.Marshal(e)
		out = append(append(out, b...), '\n')
	}
	clean := *res
	clean.Output = out
	if clean.ExitCode == 1 && !failed && len(problems) == 0 {
		clean.ExitCode = 0 // go test's exit for failures that were canaries
	}
	return &clean, problems
}

// observe takes one event of the package into account.
func (s *pkgState) observe(e event) {
	if e.Test == "" {
		s.observePackage(e)
		return
	}
	s.tests = true
	top, _, _ := strings.Cut(e.Test, "/")
	if e.Test != top {
		return // a subtest's failure fails its parent, which is judged
	}
	if e.Action == "pass" || e.Action == "fail" || e.Action == "skip" {
		s.ranTop[top] = true
	}
	switch top {
	case s.plan.failing:
		s.observeFailing(e)
	case s.plan.passing:
		s.observePassing(e, top)
	default:
		s.observeSealed(e, top)
	}
}

// observePackage reads a package-level event: its result, its summary
// line, and whether the binary died outside any test.
func (s *pkgState) observePackage(e event) {
	switch e.Action {
	case "output":
		for _, m := range crashMarks {
			s.crashed = s.crashed || strings.HasPrefix(e.Output, m)
		}
		s.summary = s.summary || e.Output == "FAIL\n"
	case "pass", "fail", "skip":
		s.result = e.Action
	}
}

// observeFailing counts the failing canary's runs and results.
func (s *pkgState) observeFailing(e event) {
	switch e.Action {
	case "run":
		s.failRuns++
	case "fail":
		s.failFails++
	case "pass", "skip":
		s.failOther = append(s.failOther, e.Action)
	}
}

// observePassing checks that the passing canary passed with its token.
func (s *pkgState) observePassing(e event, top string) {
	switch e.Action {
	case "output":
		if strings.Contains(e.Output, s.plan.passToken) {
			s.pending[top]++
		}
	case "pass":
		if s.pending[top] > 0 {
			s.pending[top]--
			s.passOK++
		} else {
			s.passBad = append(s.passBad, "passed without its token")
		}
	case "fail", "skip":
		s.passBad = append(s.passBad, e.Action)
	}
}

// observeSealed checks that a sealed test's every pass or skip came with
// its token.
func (s *pkgState) observeSealed(e event, top string) {
	seals := s.plan.seals[top]
	switch e.Action {
	case "run":
		s.runs[top]++
	case "output":
		for _, tk := range seals {
			if strings.Contains(e.Output, tk.pass) {
				s.pending[top]++
			} else if strings.Contains(e.Output, tk.skip) {
				s.pendingSkip[top]++
			}
		}
	case "pass", "skip":
		s.ended[top]++
		if len(seals) == 0 {
			return
		}
		pend := s.pending
		if e.Action == "skip" {
			pend = s.pendingSkip
		}
		if pend[top] > 0 {
			pend[top]--
		} else {
			s.unearned = append(s.unearned, fmt.Sprintf("%s was reported %s without its seal", top, map[string]string{"pass": "passed", "skip": "skipped"}[e.Action]))
		}
	case "fail":
		s.ended[top]++
		s.realFails++
	}
}

// verdict says why the package's report is forged ("" when it is not),
// and decides whether its failure was only the failing canary's.
func (s *pkgState) verdict() string {
	// The package's binary was stashed, so it ran in the second phase and
	// test2json ended its report with the package's result. Without one,
	// code in the binary removed the report (it sits in the box beside
	// the binary until every binary is done).
	if s.result == "" {
		return "its binary ran but the report holds no result for the package: the report was removed or emptied (or the run was cut short)"
	}
	var why []string
	// A binary that ran (it was stashed) and reported a pass or a skip ran
	// its canaries, unless it ran no test at all: then it was silenced.
	if s.tests || s.result == "pass" || s.result == "skip" {
		pp := s.plan
		if pp.failing != "" && (s.failFails == 0 || len(s.failOther) > 0) {
			st := "missing (it never ran)"
			if len(s.failOther) > 0 {
				st = strings.Join(s.failOther, ", ")
			}
			why = append(why, fmt.Sprintf("the gate's canary test %s, which always fails, was reported %s", pp.failing, st))
		}
		if pp.passing != "" && (s.passOK == 0 || len(s.passBad) > 0) {
			st := "missing (it never ran)"
			if len(s.passBad) > 0 {
				st = strings.Join(s.passBad, ", ")
			}
			why = append(why, fmt.Sprintf("the gate's canary test %s, which always passes, was reported %s", pp.passing, st))
		}
	}
	if n := len(s.unearned); n > 0 {
		list := s.unearned
		if n > 5 {
			list = append(list[:5:5], fmt.Sprintf("and %d more", n-5))
		}
		why = append(why, strings.Join(list, ", "))
	}
	lost := 0
	for top, n := range s.runs {
		lost += max(n-s.ended[top], 0)
	}
	fixable := s.result == "fail" && s.failFails > 0 && s.realFails == 0 && lost == 0 && !s.crashed && s.summary
	// Tests missing from a report that would be believed a pass were
	// deleted from it (a failing package fails the gate anyway).
	if len(why) == 0 && (s.result == "pass" || s.result == "skip" || fixable) {
		if m := s.missing(); m != "" {
			why = append(why, m)
		}
	}
	s.fixed = len(why) == 0 && fixable
	return strings.Join(why, "; ")
}

// missing names the tests the binary holds and the command runs that
// have no result in the report ("" when none is missing).
func (s *pkgState) missing() string {
	if s.unlisted {
		return "the harness could not read which tests its binary holds (go test wrote no _testmain.go beside it)"
	}
	if !s.sel.known {
		return ""
	}
	var out []string
	for _, n := range slices.Sorted(maps.Keys(s.listed)) {
		if n != s.plan.failing && n != s.plan.passing && s.sel.runs(n) && !s.ranTop[n] {
			out = append(out, n)
		}
	}
	switch n := len(out); {
	case n == 0:
		return ""
	case n > 5:
		out = append(out[:5:5], fmt.Sprintf("and %d more", n-5))
	}
	return strings.Join(out, ", ") + ": compiled into its binary and selected by the command, but the report gives none of them a result (their lines were deleted)"
}

// rewrite prepares one event for the clean report: keep is false for the
// canaries' events and the seals' lines; changed when e was edited.
func (s *pkgState) rewrite(e *event) (keep, changed bool) {
	if s == nil {
		return true, false
	}
	pp := s.plan
	top, _, _ := strings.Cut(e.Test, "/")
	switch {
	case e.Test != "" && (top == pp.failing || top == pp.passing):
		return false, false
	case e.Test == top && e.Action == "output":
		for _, tk := range pp.seals[top] {
			if strings.Contains(e.Output, tk.pass) || strings.Contains(e.Output, tk.skip) {
				return false, false
			}
		}
	case e.Test == "" && s.fixed:
		switch {
		case e.Action == "fail":
			e.Action = "pass"
			return true, true
		case e.Action == "output" && e.Output == "FAIL\n":
			e.Output = "PASS\n"
			return true, true
		case e.Action == "output" && strings.HasPrefix(e.Output, "FAIL\t"+e.Package+"\t"):
			e.Output = "ok  " + strings.TrimPrefix(e.Output, "FAIL")
			return true, true
		}
	}
	return true, false
}
