package testgate

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestTaggedRunExpectsNoConstrainedTests: with -tags, a test file with
// either constraint syntax may be left out of the build (go obeys an old
// // +build line alone: `// +build !integration` is not compiled under
// -tags integration), so its tests are not expected to run; without
// -tags, the files go compiles on linux are.
func TestTaggedRunExpectsNoConstrainedTests(t *testing.T) {
	dir := t.TempDir()
	for name, src := range map[string]string{
		"p.go":        "package p\n",
		"p_test.go":   "package p\n\nimport \"testing\"\n\nfunc TestPlain(t *testing.T) {}\n",
		"new_test.go": "//go:build !integration\n\npackage p\n\nimport \"testing\"\n\nfunc TestNew(t *testing.T) {}\n",
		"old_test.go": "// +build !integration\n\npackage p\n\nimport \"testing\"\n\nfunc TestOld(t *testing.T) {}\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	v, err := newChangeView(dir, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		tags bool
		want []string
	}{
		{false, []string{"TestNew", "TestOld", "TestPlain"}},
		{true, []string{"TestPlain"}},
	} {
		got, probs := testsInDir(v, ".", c.tags)
		slices.Sort(got)
		if !slices.Equal(got, c.want) || len(probs) > 0 {
			t.Errorf("tags %v: expected %v (%v), want %v", c.tags, got, probs, c.want)
		}
	}
}
