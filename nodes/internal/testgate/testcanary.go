package testgate

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"go/parser"
	"go/token"
	"io/fs"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/sandgate/sandgate/nodes/internal/command"
	"github.com/sandgate/sandgate/nodes/internal/feedback"
	"github.com/sandgate/sandgate/nodes/testreport"
	"github.com/sandgate/sandgate/nodes/workspace"
	"github.com/sandgate/sandgate/sandbox"
)

// The change's code runs inside the test binary that reports on it, and
// go test -json believes every stdout line that starts with \x16 as
// test2json framing: an init that prints "--- PASS" for each test it can
// name, or that re-runs the binary and turns FAIL into PASS, forges the
// whole report. So the gate compiles into every package it can test one
// more test that always fails, named from ordinary words at random and
// added through go test -overlay (the workspace is untouched). A report
// in which a canary did not fail was rewritten and is not believed. This
// catches forgers that treat every test alike; one that spares exactly
// the canary (it can tell: the canary's source is not in the package
// directory) or forges only the tests it knows are failing is not caught.

// testCanary is one always-failing test added to package pkg (an import
// path) in dir (a slash path relative to the workspace).
type testCanary struct{ pkg, dir, name, file string }

// canaryShell prepends -overlay to GOFLAGS and runs the command; $0 is the
// overlay file.
const canaryShell = `GOFLAGS="${GOFLAGS:+$GOFLAGS }-overlay=$0"; export GOFLAGS; exec "$@"`

// failFast matches -failfast, with which go test starts no further
// package after the first failure: the canary's would hide the rest.
var failFast = regexp.MustCompile(`(^|\s)--?(test\.)?failfast(\s|=|$)`)

// plainGoTest reports whether args is one go test command the gate may
// wrap: an argv, or a shell line without operators (a canary failing
// would otherwise change what `go test && x` runs).
func plainGoTest(c command.Command, args []string) bool {
	if c.Argv != nil {
		return len(args) > 1 && args[0] == "go" && args[1] == "test"
	}
	f := strings.Fields(c.Line)
	return len(f) > 1 && f[0] == "go" && f[1] == "test" && !strings.ContainsAny(c.Line, ";&|`$()<>\n\\")
}

// withCanaries writes a canary into the box for each package directory
// of the view that declares tests and returns the command that compiles
// them in. args is returned unchanged when canaries cannot apply: not a
// plain go test, or tests selected by name (the canary would not run).
func (t *Test) withCanaries(ctx context.Context, w *workspace.Workspace, v *changeView, args []string) ([]string, []testCanary, error) {
	cmd := t.run.Display(args)
	if !t.canary || t.report != "" || (t.format != "auto" && t.format != "go-json") || !plainGoTest(t.run, args) || selectsTests.MatchString(cmd) || failFast.MatchString(cmd) {
		return args, nil, nil
	}
	mod := moduleOf(v)
	if mod == "" {
		return args, nil, nil
	}
	box := path.Join(sandbox.TmpDir, "sandgate-canary-"+randomHex())
	overlay := map[string]string{}
	var script strings.Builder
	fmt.Fprintf(&script, "set -e\nmkdir -p %s\n", command.Quote(box))
	var cs []testCanary
	tags := buildTags.MatchString(t.run.Display(args))
	for _, dir := range testDirs(v) {
		c, src, ok := makeCanary(v, mod, dir, tags)
		if !ok {
			continue
		}
		file := path.Join(box, fmt.Sprintf("%d.go", len(cs)))
		overlay[path.Join(sandbox.WorkDir, dir, c.file)] = file
		fmt.Fprintf(&script, "printf '%%s' %s > %s\n", command.Quote(src), command.Quote(file))
		cs = append(cs, c)
	}
	if len(cs) == 0 {
		return args, nil, nil
	}
	js, _ := json.Marshal(map[string]any{"Replace": overlay})
	ov := path.Join(box, "overlay.json")
	fmt.Fprintf(&script, "printf '%%s' %s > %s\n", command.Quote(string(js)), command.Quote(ov))
	res, err := w.Command(ctx, sandbox.Command{Args: []string{"sh", "-s"}, Stdin: []byte(script.String()), Timeout: time.Minute})
	if err != nil {
		return nil, nil, err
	}
	if res.ExitCode != 0 {
		return nil, nil, fmt.Errorf("write the test gate's canaries to %s in the box: exit %d: %s", box, res.ExitCode, feedback.Tail(string(res.Output), 1024))
	}
	return append([]string{"sh", "-c", canaryShell, ov}, args...), cs, nil
}

// testDirs lists the view's directories that hold test files, as go
// would visit them (no testdata, vendor, or . and _ directories).
func testDirs(v *changeView) []string {
	set := map[string]bool{}
	_ = filepath.WalkDir(v.snap, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		rel, _ := filepath.Rel(v.snap, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() && rel != "." && (ignoredByGo(rel) || d.Name() == "vendor") {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(rel, "_test.go") {
			set[path.Dir(rel)] = true
		}
		return nil
	})
	for p := range v.changes {
		if strings.HasSuffix(p, "_test.go") && !ignoredByGo(p) {
			set[path.Dir(p)] = true
		}
	}
	for p := range v.extra {
		if strings.HasSuffix(p, "_test.go") && !ignoredByGo(p) {
			set[path.Dir(p)] = true
		}
	}
	out := make([]string, 0, len(set))
	for d := range set {
		out = append(out, d)
	}
	slices.Sort(out)
	return out
}

// makeCanary names and writes the canary of one directory, in the package
// of its test files; ok is false when the directory declares no test go
// test would run (a canary there would make the package's only test).
func makeCanary(v *changeView, mod, dir string, tags bool) (testCanary, string, bool) {
	pkg, ok := importPathIn(v, dir)
	names, _ := testsInDir(v, dir, tags)
	if !ok || len(names) == 0 {
		return testCanary{}, "", false
	}
	var src strings.Builder
	pkgName := ""
	ctx := viewContext(v)
	for _, f := range v.files(dir) {
		b, err := v.read(path.Join(dir, f))
		if err != nil || !strings.HasSuffix(f, ".go") {
			continue
		}
		src.Write(b)
		if pkgName == "" && strings.HasSuffix(f, "_test.go") && compiled(ctx, dir, f) {
			if pf, err := parser.ParseFile(token.NewFileSet(), f, b, parser.PackageClauseOnly); err == nil {
				pkgName = pf.Name.Name
			}
		}
	}
	if pkgName == "" {
		return testCanary{}, "", false
	}
	for range 50 {
		w := canaryWords(4)
		name := "Test" + w[0] + w[1] + w[2]
		// zz_ sorts the file last, so -failfast stops no test after it.
		file := "zz_" + strings.ToLower(w[1]+"_"+w[2]) + "_test.go"
		if slices.Contains(names, name) || strings.Contains(src.String(), name) || slices.Contains(v.files(dir), file) {
			continue
		}
		word := strings.ToLower(w[3])
		code := fmt.Sprintf("package %s\n\nimport \"testing\"\n\nfunc %s(t *testing.T) {\n\tif got, want := len(%q), %d; got != want {\n\t\tt.Errorf(\"len = %%d, want %%d\", got, want)\n\t}\n}\n",
			pkgName, name, word, len(word)+1)
		return testCanary{pkg: pkg, dir: dir, name: name, file: file}, code, true
	}
	return testCanary{}, "", false
}

// canaryVocabulary makes names that read like any test's, so a forger
// cannot spare the canary by its shape.
var canaryVocabulary = strings.Fields(`Parse Empty Header Value Limit Order Range Write Read Close Open
	Merge Split Join Trim Quote Escape Token Buffer Cache Store Index Query Match Route Frame Field
	Record Column Batch Queue Retry Timeout Config Option Format Encode Decode Count Sum Total
	Default Nested Unicode Large Small Zero Negative Boundary Overflow`)

func canaryWords(n int) []string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails on Linux
	w := make([]string, n)
	for i, x := range b {
		w[i] = canaryVocabulary[int(x)%len(canaryVocabulary)]
	}
	return w
}

func randomHex() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// reportCanaries names the canaries as the report knows them.
func reportCanaries(cs []testCanary) []testreport.Canary {
	out := make([]testreport.Canary, len(cs))
	for i, c := range cs {
		out[i] = testreport.Canary{Package: c.pkg, Name: c.name}
	}
	return out
}
