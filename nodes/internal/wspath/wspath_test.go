package wspath

import "testing"

// TestClean holds every rule the agent's tools and apply_patch used
// before they shared Clean, plus git's own .git spellings: a path either
// refused stays refused.
func TestClean(t *testing.T) {
	cases := []struct {
		in, want string // want "" means refused
	}{
		{"calc.go", "calc.go"},
		{"./x", "x"},
		{"dir/", "dir"},
		{"a//b/./c", "a/b/c"},
		{".", "."},
		{".github/ci.yml", ".github/ci.yml"},
		{".gitignore", ".gitignore"},
		{"a.git/x", "a.git/x"},
		{"", ""},
		{"/etc/passwd", ""},
		{"../x", ""},
		{"a/../../x", ""},
		{"a/b/../c.go", ""},
		{"a/..", ""},
		{"x\x00y", ""},
		{".git", ""},
		{".git/config", ""},
		{"./.git/hooks/pre-commit", ""},
		{"sub/.git/config", ""},
		{".GIT/config", ""},
		{"GIT~1/config", ""},
		{".git./x", ""},
		{".g\u200cit/x", ""},
		{`a\.git\hooks`, ""},
	}
	for _, c := range cases {
		got, err := Clean(c.in)
		if c.want == "" {
			if err == nil {
				t.Errorf("Clean(%q) = %q, want refused", c.in, got)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("Clean(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
}
