package eval

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"

	"github.com/sandgate/sandgate/internal/gocanary"
)

// TestUntrusted is every test's result when the report that holds it was
// forged: a seal or a canary (see internal/gocanary) was broken.
const TestUntrusted = "untrusted"

// A change runs inside the test binary that reports on it, so it can
// print the framing lines go test -json believes (test2json's ^V-marked
// "--- PASS"), or capture the real report and turn FAIL into PASS. The
// grader therefore grades as the test gate judges: every graded package
// gets seals on its tests (a pass must show a secret token the binary
// alone holds), a failing and a passing canary shaped like its own tests,
// compiled in while nothing of the change runs; the held-out files are
// deleted before any binary runs, so a forger cannot read their names.
// A report that breaks a seal or a canary was forged, and none of it is
// believed.

// canaryPlan plans the graded packages' seals and canaries; the held-out
// files (under hidden, placed in dir) leave the box once compiled.
func canaryPlan(dir, hidden string, pkgs []testPkg) *gocanary.Plan {
	o := gocanary.Options{Failing: true, Passing: true, Only: []string{}}
	for _, p := range pkgs {
		o.Only = append(o.Only, p.Dir)
	}
	if hidden != "" {
		_ = filepath.WalkDir(hidden, func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.Type().IsRegular() {
				rel, _ := filepath.Rel(hidden, p)
				o.Hide = append(o.Hide, filepath.ToSlash(rel))
			}
			return nil
		})
	}
	return gocanary.NewPlan(gocanary.DirTree(dir), o)
}

// packageName is the package clause of a Go file.
func packageName(path string) (string, error) {
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.PackageClauseOnly)
	if err != nil {
		return "", err
	}
	return f.Name.Name, nil
}
