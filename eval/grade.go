package eval

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/sandgate/sandgate/internal/gocanary"
	"github.com/sandgate/sandgate/sandbox"
)

// Test results in a grade.
const (
	TestPass    = "pass"
	TestFail    = "fail"
	TestSkip    = "skip"
	TestMissing = "missing" // never reported: counted as failed
)

// TestGrade is one declared test on the base and after the change.
type TestGrade struct {
	Name   string `json:"name"`
	Kind   string `json:"kind"` // fail_to_pass or pass_to_pass
	Before string `json:"before"`
	After  string `json:"after,omitempty"`
}

// grader runs declared tests in fresh boxes.
type grader struct {
	policy          sandbox.Policy
	allowUnconfined bool
	timeout         time.Duration
}

// tree writes the files of rev in the git directory gitDir into dir,
// then the held-out files over them: at their paths they win, so any
// edit the change made there (a weakened test) is reverted.
func tree(ctx context.Context, gitDir, rev, hidden, dir string) error {
	if err := archive(ctx, gitDir, rev, dir); err != nil {
		return err
	}
	return placeHidden(hidden, dir)
}

// archive writes the files of rev (only paths, when given) into dir.
func archive(ctx context.Context, gitDir, rev, dir string, paths ...string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	args := append([]string{"--git-dir=" + gitDir, "archive", "--format=tar", rev, "--"}, paths...)
	arch := exec.CommandContext(ctx, "git", args...)
	untar := exec.CommandContext(ctx, "tar", "-x", "-C", dir)
	pipe, err := arch.StdoutPipe()
	if err != nil {
		return err
	}
	untar.Stdin = pipe
	var aerr strings.Builder
	arch.Stderr = &aerr
	if err := arch.Start(); err != nil {
		return err
	}
	out, terr := untar.CombinedOutput()
	if err := arch.Wait(); err != nil {
		return fmt.Errorf("git archive %s in %s: %w: %s", rev, gitDir, err, strings.TrimSpace(aerr.String()))
	}
	if terr != nil {
		return fmt.Errorf("unpack %s: %w: %s", rev, terr, out)
	}
	return nil
}

// placeHidden copies the held-out files into dir, replacing what is there:
// whatever the change left on a held-out file's path, or on the path of a
// directory above it (a file, a directory, a symlink, never followed), is
// removed first. Otherwise grading would error, and an errored task
// leaves the rates.
func placeHidden(hidden, dir string) error {
	r, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer r.Close()
	return filepath.WalkDir(hidden, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if !d.Type().IsRegular() {
			return fmt.Errorf("%s: only regular files can be held-out tests", p)
		}
		rel, _ := filepath.Rel(hidden, p)
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if err := clearPath(r, rel); err != nil {
			return fmt.Errorf("place %s: %w", rel, err)
		}
		return r.WriteFile(rel, data, 0o644)
	})
}

// clearPath makes way in r for a file at rel: every parent is a real
// directory, and nothing is at rel itself.
func clearPath(r *os.Root, rel string) error {
	parts := strings.Split(filepath.ToSlash(rel), "/")
	for i := 1; i < len(parts); i++ {
		p := filepath.Join(parts[:i]...)
		fi, err := r.Lstat(p)
		if err == nil && fi.IsDir() {
			continue
		}
		if err == nil {
			if err := r.RemoveAll(p); err != nil {
				return err
			}
		} else if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		if err := r.Mkdir(p, 0o755); err != nil {
			return err
		}
	}
	if err := r.RemoveAll(rel); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// graded is one grading go test: each declared test's result, the
// command, and, when a seal or a canary shows the report was forged, why
// (every result is then TestUntrusted).
type graded struct {
	Tests   map[string]string
	Command string
	Forged  string
}

// run runs the named tests in a fresh box over dir, sealed and canaried,
// and returns each one's result; a test the output never reports is
// TestMissing. hidden is the directory of the held-out files placed in
// dir ("" for none): they leave the box before any test binary runs.
func (g *grader) run(ctx context.Context, dir, hidden string, names []string) (*graded, error) {
	out := &graded{Tests: map[string]string{}}
	for _, n := range names {
		out.Tests[n] = TestMissing
	}
	pkgs, err := testPackages(dir, names)
	if err != nil {
		return nil, err
	}
	if len(pkgs) == 0 {
		out.Command = "no package declares the tests"
		return out, nil
	}
	plan := canaryPlan(dir, hidden, pkgs)
	state, err := os.MkdirTemp("", "sg-eval-grade-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(state)
	box, err := sandbox.Start(ctx, sandbox.Options{Policy: g.policy, Workspace: dir, StateDir: state, AllowUnconfined: g.allowUnconfined})
	if err != nil {
		return nil, fmt.Errorf("grading box: %w", err)
	}
	defer box.Close()
	dirs := make([]string, len(pkgs))
	for i, p := range pkgs {
		dirs[i] = p.Dir
	}
	args := append([]string{"go", "test", "-json", "-count=1", "-run", runPattern(append(plan.Names(), names...))}, dirs...)
	raw, err := plan.Run(ctx, box.Exec, args, g.timeout, 64<<20)
	if err != nil {
		return nil, fmt.Errorf("grading: %w", err)
	}
	res, forged := plan.Decode(raw)
	out.Command = strings.Join(args, " ")
	out.Tests = perPackage(pkgs, plan, parseResults(res.Output), names)
	if len(forged) > 0 {
		out.Forged = joinWhy(forged)
		for n := range out.Tests {
			out.Tests[n] = TestUntrusted
		}
	}
	return out, nil
}

// perPackage is each declared test's result: it passes only if it passed
// in every package whose test files declare it, so a namesake passing in
// another package does not make up for it missing from its own. A
// package's import path is the one go test reported for its stashed
// binary.
func perPackage(pkgs []testPkg, plan *gocanary.Plan, got map[string]map[string]string, names []string) map[string]string {
	res := map[string]string{}
	for _, n := range names {
		top, _, _ := strings.Cut(n, "/")
		st := ""
		for _, p := range pkgs {
			if !slices.Contains(p.Tests, top) {
				continue
			}
			got, ok := got[plan.ImportPath(p.Dir)][n]
			if !ok {
				got = TestMissing
			}
			if st == "" || st == TestPass {
				st = got
			}
		}
		if st == "" {
			st = TestMissing
		}
		res[n] = st
	}
	return res
}

// runPattern is go test's -run pattern for the tests' top-level names.
func runPattern(names []string) string {
	seen := map[string]bool{}
	var top []string
	for _, n := range names {
		t, _, _ := strings.Cut(n, "/")
		if !seen[t] {
			seen[t] = true
			top = append(top, regexp.QuoteMeta(t))
		}
	}
	sort.Strings(top)
	return "^(" + strings.Join(top, "|") + ")$"
}

// testPkg is a package directory (./dir) and the package its test
// files declaring the tests are in.
type testPkg struct {
	Dir, Name string
	// Tests are the wanted top-level tests its files declare.
	Tests []string
}

// testPackages lists the packages whose test files declare one of the
// tests.
func testPackages(root string, names []string) ([]testPkg, error) {
	want := map[string]bool{}
	for _, n := range names {
		t, _, _ := strings.Cut(n, "/")
		want[t] = true
	}
	decl := regexp.MustCompile(`(?m)^func (Test[A-Za-z0-9_]*)\(`)
	found := map[string]*testPkg{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if b := d.Name(); p != root && (b == "testdata" || b == "vendor" || strings.HasPrefix(b, ".") || strings.HasPrefix(b, "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, "_test.go") || !d.Type().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, filepath.Dir(p))
		dir := "./" + filepath.ToSlash(rel)
		for _, m := range decl.FindAllSubmatch(b, -1) {
			if !want[string(m[1])] {
				continue
			}
			if found[dir] == nil {
				// A file that does not parse leaves the package unbuilt: its
				// tests are missing, which fails them.
				name, _ := packageName(p)
				if name == "" {
					name = "main"
				}
				found[dir] = &testPkg{Dir: dir, Name: name}
			}
			if tp := found[dir]; !slices.Contains(tp.Tests, string(m[1])) {
				tp.Tests = append(tp.Tests, string(m[1]))
			}
		}
		return nil
	})
	pkgs := make([]testPkg, 0, len(found))
	for _, p := range found {
		pkgs = append(pkgs, *p)
	}
	sort.Slice(pkgs, func(i, j int) bool { return pkgs[i].Dir < pkgs[j].Dir })
	return pkgs, err
}

// parseResults reads go test -json output: each test's final action, by
// package import path. A repeated report keeps its first failure.
func parseResults(out []byte) map[string]map[string]string {
	res := map[string]map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var ev struct{ Action, Package, Test string }
		if json.Unmarshal(sc.Bytes(), &ev) != nil || ev.Test == "" {
			continue
		}
		var st string
		switch ev.Action {
		case "pass":
			st = TestPass
		case "fail":
			st = TestFail
		case "skip":
			st = TestSkip
		default:
			continue
		}
		if res[ev.Package] == nil {
			res[ev.Package] = map[string]string{}
		}
		if prev, ok := res[ev.Package][ev.Test]; ok && prev != TestPass {
			continue // a failure stands
		}
		res[ev.Package][ev.Test] = st
	}
	return res
}
