package gocanary

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestSelectionAgreesWithTesting: for each -run and -skip, the top-level
// tests selectionOf says run are those a real test binary runs.
func TestSelectionAgreesWithTesting(t *testing.T) {
	names := []string{"TestA", "TestAB", "TestB", "TestB_c", "TestÄ", "FuzzA"}
	var src strings.Builder
	src.WriteString("package sel\n\nimport \"testing\"\n\n")
	for _, n := range names {
		if strings.HasPrefix(n, "Fuzz") {
			src.WriteString("func " + n + "(f *testing.F) { f.Fuzz(func(t *testing.T, b []byte) {}) }\n")
			continue
		}
		src.WriteString("func " + n + "(t *testing.T) { t.Run(\"c\", func(t *testing.T) {}) }\n")
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module sel\n\ngo 1.22\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "sel_test.go"), []byte(src.String()), 0o644)
	bin := filepath.Join(dir, "sel.test")
	if out, err := exec.Command("go", "test", "-C", dir, "-c", "-o", bin).CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	ran := regexp.MustCompile(`(?m)^--- (?:PASS|SKIP|FAIL): (\S+) `)
	for _, flags := range [][]string{
		nil,
		{"-run", "A"},
		{"-run=^TestA$"},
		{"-run", "TestB/c"},
		{"-run", "X|B"},
		{"-run", "A/x|B"},
		{"-run", "Test[AB]$"},
		{"-run", "(A|B)C"},
		{"-skip", "A"},
		{"-skip", "A/c"},
		{"-skip", "B/c|B"},
		{"-skip", "B|B/c"},
		{"-test.run", "Test", "-test.skip", "AB|Ä"},
		{"-run", ""},
		{"-run", "Fuzz"},
	} {
		bflags := []string{"-test.v"}
		for _, f := range flags {
			if strings.HasPrefix(f, "-run") || strings.HasPrefix(f, "-skip") {
				f = "-test." + f[1:]
			}
			bflags = append(bflags, f)
		}
		out, _ := exec.Command(bin, bflags...).CombinedOutput()
		var want []string
		for _, m := range ran.FindAllStringSubmatch(string(out), -1) {
			if !strings.Contains(m[1], "/") {
				want = append(want, m[1])
			}
		}
		sel := selectionOf(append([]string{"go", "test", "-json"}, flags...))
		var got []string
		for _, n := range names {
			if sel.runs(n) {
				got = append(got, n)
			}
		}
		slices.Sort(want)
		slices.Sort(got)
		if !sel.known || !slices.Equal(got, want) {
			t.Errorf("%q: selection runs %v (known %v), the binary ran %v", flags, got, sel.known, want)
		}
	}
	for _, args := range [][]string{
		{"go", "test", "-json", "./...", "-args", "-test.run", "X"},
		{"go", "test", "-json", "-run", "(", "./..."},
		{"go", "test", "-mystery", "./..."},
	} {
		if selectionOf(args).known {
			t.Errorf("%q: a command whose selection cannot be read must not be judged by one", args)
		}
	}
}
