package testgate

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/sandgate/sandgate/nodes/internal/gate"
	"github.com/sandgate/sandgate/nodes/testreport"
	"github.com/sandgate/sandgate/sandbox"
)

// pytest runs the change's code in the process that writes its report: a
// conftest.py hook, a plugin, or any module a test imports can rewrite
// outcomes on their way to the JUnit writer, or write the report file
// itself. So in every directory of the judged tree that holds test files
// the command collects, the gate plants two tests of its own under fresh
// random names, one that fails and one that passes, laid over the
// candidate before the box starts (gate.Plant) so the same conftest.py
// files reach them. The report must show the failing one failed and the
// passing one passed, each exactly once; a report that turned every
// failure into a pass, or that was written without running them, is
// forged. Both are taken out of the counts afterwards.
//
// What it does not catch, said in the README: a forger that tells the
// canaries apart and flips only the others' failures. Their shape alone
// gives them away (a module test_ + 12 hex digits), so that forger needs
// no knowledge of the repository; one that knows the repository's tests
// needs none of the shape (there is no seal as Go's, as a Python test's
// pass carries no secret the test code cannot read).

// maxPyCanaryDirs bounds how many directories get canaries.
const maxPyCanaryDirs = 64

// pyCanary is one run's planted tests.
type pyCanary struct {
	files map[string][]byte
	// want maps each canary test function's name to "failed" or "passed".
	want map[string]string
}

// pytestSelects matches pytest options with which the command runs only
// some tests, or stops at the first failure: the failing canary would
// stop the real tests, or the canaries would not run.
var pytestSelects = map[string]bool{"-x": true, "--exitfirst": true, "-k": true, "-m": true, "--lf": true,
	"--last-failed": true, "--ff": true, "--sw": true, "--stepwise": true, "--deselect": true, "--maxfail": true,
	"--collect-only": true, "--co": true, "--pyargs": true}

// pytestArgs reports whether args runs pytest (pytest, py.test or
// PYTHON -m pytest), and its words that are not options (the paths it
// collects, and the values of options written apart, which newPyCanary
// tells from directories); ok is false when the canaries cannot apply
// (see pytestSelects, or a word naming a single file or test).
func pytestArgs(args []string) (words []string, ok bool) {
	i := slices.IndexFunc(args, func(a string) bool { b := path.Base(a); return b == "pytest" || b == "py.test" })
	if i < 0 || (i > 0 && args[i-1] != "-m") {
		return nil, false // no pytest, or pytest named as an argument of something else
	}
	words = []string{}
	for _, a := range args[i+1:] {
		opt, _, _ := strings.Cut(a, "=")
		switch {
		case pytestSelects[opt], strings.HasPrefix(a, "-k") && a != "-k", strings.HasPrefix(a, "-m") && len(a) > 2:
			return nil, false
		case strings.HasPrefix(a, "-"):
		case strings.Contains(a, "::") || strings.HasSuffix(a, ".py"):
			return nil, false
		default:
			words = append(words, path.Clean(a))
		}
	}
	return words, true
}

// isPyTestFile is pytest's default python_files: test_*.py or *_test.py.
func isPyTestFile(name string) bool {
	return strings.HasSuffix(name, ".py") && (strings.HasPrefix(name, "test_") || strings.HasSuffix(name, "_test.py"))
}

// newPyCanary plans the canaries of one pytest run over the judged tree,
// or returns nil when there is no directory of tests under the paths it
// collects: the words that name a directory of the tree, or the whole
// tree when none does (pytest's own default).
func newPyCanary(v *changeView, words []string) *pyCanary {
	all := (viewTree{v}).Dirs()
	var paths []string
	for _, w := range words {
		if w == "." || slices.ContainsFunc(all, func(d string) bool { return under(d, []string{w}) }) {
			paths = append(paths, w)
		}
	}
	if len(paths) == 0 {
		paths = []string{"."}
	}
	var dirs []string
	for _, d := range all {
		if !under(d, paths) || pytestSkips(d) {
			continue
		}
		if slices.ContainsFunc(v.files(d), isPyTestFile) {
			dirs = append(dirs, d)
		}
	}
	if len(dirs) == 0 {
		return nil
	}
	slices.Sort(dirs)
	if len(dirs) > maxPyCanaryDirs {
		dirs = dirs[:maxPyCanaryDirs]
	}
	c := &pyCanary{files: map[string][]byte{}, want: map[string]string{}}
	for _, d := range dirs {
		mod, fail, pass := "test_"+randomWord(), "test_"+randomWord(), "test_"+randomWord()
		c.want[fail], c.want[pass] = "failed", "passed"
		src := fmt.Sprintf("def %s():\n    assert %d == %d\n\n\ndef %s():\n    assert %d == %d\n", fail, 6, 7, pass, 7, 7)
		c.files[path.Join(d, mod+".py")] = []byte(src)
	}
	return c
}

// pytestSkips reports whether pytest's default norecursedirs keeps it
// out of dir (a repository that sets its own may need canary: off).
func pytestSkips(dir string) bool {
	if dir == "." {
		return false
	}
	for _, p := range strings.Split(dir, "/") {
		switch {
		case strings.HasPrefix(p, "."), strings.HasSuffix(p, ".egg"), p == "_darcs", p == "build", p == "CVS",
			p == "dist", p == "node_modules", p == "venv", p == "{arch}":
			return true
		}
	}
	return false
}

// under reports whether dir is one of paths or below one.
func under(dir string, paths []string) bool {
	for _, p := range paths {
		if p == "." || dir == p || strings.HasPrefix(dir, p+"/") {
			return true
		}
	}
	return false
}

// randomWord is 12 random lower-case hex digits.
func randomWord() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// pyCanaryPlan plants the pytest canaries of the gate's run, and
// returns them, or nil when they do not apply: canary: off, no report
// file (pytest's JUnit XML), not a pytest command that runs whole
// directories, or no test directory under its paths.
func (t *Test) pyCanaryPlan(ctx context.Context, v *changeView, args []string) (*pyCanary, error) {
	if !t.canary || t.report == "" {
		return nil, nil
	}
	paths, ok := pytestArgs(args)
	if !ok {
		return nil, nil
	}
	c := newPyCanary(v, paths)
	if c == nil {
		return nil, nil
	}
	if err := gate.Plant(ctx, c.files); err != nil {
		return nil, fmt.Errorf("plant the pytest canaries: %w", err)
	}
	return c, nil
}

// check judges a report by its canaries and takes them out of its
// counts: each must show up exactly once, with the outcome planted. With
// the failing canary run, pytest exits 1 (tests failed); 0 says the
// process was made to lie, anything else is CheckExit's to judge. It
// returns what it found forged.
func (c *pyCanary) check(rep *testreport.Report, res *sandbox.Result, out string) []string {
	var problems []string
	if res.ExitCode == 0 {
		problems = append(problems, "pytest exited 0 although the gate's failing canary test ran: the run's outcome was forged")
	}
	seen := map[string][]string{}
	for _, k := range rep.Cases {
		if _, ok := c.want[k.Name]; ok {
			seen[k.Name] = append(seen[k.Name], k.Outcome)
		}
	}
	for name, want := range c.want {
		got := seen[name]
		switch {
		case len(got) == 0:
			problems = append(problems, fmt.Sprintf("the report lacks the gate's canary test %s, planted beside the tests to %s: the report is not this run's (forged, or the command does not collect test_*.py files; canary: off turns the canaries off)", name, want))
		case len(got) > 1:
			problems = append(problems, fmt.Sprintf("the report shows the gate's canary test %s %d times: it is forged", name, len(got)))
		case got[0] != want:
			problems = append(problems, fmt.Sprintf("the report says the gate's canary test %s %s, but it always %s: the report is forged", name, got[0], want))
		}
		if len(got) == 1 && got[0] == want {
			if want == "failed" {
				rep.Failed--
			} else {
				rep.Passed--
			}
		}
	}
	rep.Failures = slices.DeleteFunc(rep.Failures, func(f testreport.Failure) bool {
		name := f.Name[strings.LastIndex(f.Name, ".")+1:]
		return c.want[name] == "failed" && slices.Equal(seen[name], []string{"failed"})
	})
	slices.Sort(problems)
	rep.Problems = append(slices.Clone(problems), rep.Problems...)
	if res.ExitCode > 1 {
		CheckExit(rep, res, out)
	}
	return problems
}
