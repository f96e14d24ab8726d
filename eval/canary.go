package eval

import (
	"crypto/rand"
	"fmt"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// TestUntrusted is every test's result when the report that holds it was
// forged: a canary that always fails was reported otherwise.
const TestUntrusted = "untrusted"

// A change runs inside the test binary that reports on it, so it can
// print the framing lines go test -json believes (test2json's ^V-marked
// "--- PASS"), or capture the real report and turn FAIL into PASS. The
// grader therefore adds to each graded package a canary: a test with a
// random name made of ordinary words, in a file with such a name, that always fails. A report
// in which it did not fail was rewritten, and none of it is believed. A
// forger must tell the canary from the held-out tests, which also fail on
// a wrong change and which it has never seen either.
type canary struct {
	Pkg, Name, File string
}

// addCanaries writes one canary into each package directory (relative to
// root, as testPackages returns them) in the package its tests declare.
func addCanaries(root string, pkgs []testPkg, names []string) ([]canary, error) {
	var out []canary
	for _, p := range pkgs {
		c, word, err := pickCanary(filepath.Join(root, p.Dir), p.Dir, names)
		if err != nil {
			return nil, err
		}
		src := fmt.Sprintf("package %s\n\nimport \"testing\"\n\nfunc %s(t *testing.T) {\n\tif got, want := len(%q), %d; got != want {\n\t\tt.Errorf(\"len = %%d, want %%d\", got, want)\n\t}\n}\n",
			p.Name, c.Name, word, len(word)+1)
		f, err := os.OpenFile(filepath.Join(root, c.File), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err != nil {
			return nil, fmt.Errorf("canary in %s: %w", p.Dir, err)
		}
		_, werr := f.WriteString(src)
		if err := f.Close(); werr == nil {
			werr = err
		}
		if werr != nil {
			return nil, werr
		}
		out = append(out, c)
	}
	return out, nil
}

// pickCanary names a canary that neither a file nor a function of the
// package, nor a declared test, already uses (a clash would break the
// build, and an honest change would fail).
func pickCanary(dir, rel string, names []string) (canary, string, error) {
	var src strings.Builder
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".go") && e.Type().IsRegular() {
			b, _ := os.ReadFile(filepath.Join(dir, e.Name()))
			src.Write(b)
		}
	}
	for range 50 {
		w, err := randomWords(4)
		if err != nil {
			return canary{}, "", err
		}
		c := canary{Pkg: rel, Name: "Test" + title(w[0]) + title(w[1]) + title(w[2]), File: filepath.Join(rel, w[2]+"_"+w[3]+"_test.go")}
		_, statErr := os.Lstat(filepath.Join(dir, filepath.Base(c.File)))
		if os.IsNotExist(statErr) && !strings.Contains(src.String(), c.Name) && !slices.Contains(names, c.Name) {
			return c, w[3], nil
		}
	}
	return canary{}, "", fmt.Errorf("canary in %s: no free name", rel)
}

// forged says which canaries were not reported failed ("" when none). A
// canary missing from a report in which no declared test passed is no
// forgery: nothing ran (the package does not build, or its TestMain
// exits), and the missing tests fail on their own.
func forged(cs []canary, res map[string]string, names []string) string {
	passed := false
	for _, n := range names {
		passed = passed || res[n] == TestPass
	}
	var bad []string
	for _, c := range cs {
		st := res[c.Name]
		if st == "" {
			st = TestMissing
		}
		if st != TestFail && (st != TestMissing || passed) {
			bad = append(bad, fmt.Sprintf("canary %s in %s, which always fails, was reported %s", c.Name, c.Pkg, st))
		}
	}
	if len(bad) == 0 {
		return ""
	}
	return "the test report was forged: " + joinWhy(bad)
}

// canaryWords make canary names that read like any test's: a name with
// random digits would let a forger spare it.
var canaryWords = strings.Fields(`parse empty header value limit order range write read close open
	merge split join trim quote escape token buffer cache store index query match route frame field
	record column batch queue retry timeout config option format encode decode count sum total
	default nested unicode large small zero negative boundary overflow`)

// randomWords picks n canary words (with repeats) at random.
func randomWords(n int) ([]string, error) {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		return nil, err
	}
	w := make([]string, n)
	for i, x := range b {
		w[i] = canaryWords[int(x)%len(canaryWords)]
	}
	return w, nil
}

func title(s string) string { return strings.ToUpper(s[:1]) + s[1:] }

// packageName is the package clause of a Go file.
func packageName(path string) (string, error) {
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.PackageClauseOnly)
	if err != nil {
		return "", err
	}
	return f.Name.Name, nil
}
