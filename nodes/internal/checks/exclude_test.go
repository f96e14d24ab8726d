package checks

import (
	"strings"
	"testing"
)

// TestExcludeAnchored: exclude patterns are .gitignore's syntax anchored
// at the root; a name without a slash is the root's file only.
func TestExcludeAnchored(t *testing.T) {
	cases := []struct {
		patterns string // space separated
		path     string
		want     bool
	}{
		{"go.sum", "go.sum", true},
		{"go.sum", "tools/go.sum", false},
		{"/go.sum", "go.sum", true},
		{"**/go.sum", "tools/go.sum", true},
		{"**/go.sum", "go.sum", true},
		{"**/go.sum", "a/b/c/go.sum", true},
		{"*.sum", "go.sum", true},
		{"*.sum", "tools/go.sum", false},
		{"gen/", "gen/a.go", true},
		{"gen/", "gen", false},
		{"gen", "gen/x/y.go", true},
		{"gen/**", "gen/x/y.go", true},
		{"a/**/b.go", "a/b.go", true},
		{"a/**/b.go", "a/x/y/b.go", true},
		{"a/**/b.go", "c/a/b.go", false},
		{"gen/*.go", "gen/x/y.go", false},
		{"ge?/[a-c].go", "gen/b.go", true},
		{"gen/** !gen/keep.go", "gen/keep.go", false},
		{"gen/** !gen/keep.go", "gen/other.go", true},
		{"**/**/**/**/**/**/x", strings.Repeat("d/", 60) + "x", true},
	}
	for _, c := range cases {
		l, err := parseExclude(strings.Fields(c.patterns))
		if err != nil {
			t.Fatalf("%q: %v", c.patterns, err)
		}
		if got := l.excludes(c.path); got != c.want {
			t.Errorf("exclude %q, %s: %v, want %v", c.patterns, c.path, got, c.want)
		}
	}
	for _, bad := range []string{"", "/", "!", "a//b", "[a"} {
		if _, err := parseExclude([]string{bad}); err == nil {
			t.Errorf("pattern %q accepted", bad)
		}
	}
}

func FuzzExclude(f *testing.F) {
	f.Add("**/go.sum", "tools/go.sum")
	f.Fuzz(func(t *testing.T, pattern, p string) {
		l, err := parseExclude([]string{pattern})
		if err != nil {
			return
		}
		l.excludes(p)
	})
}
