package wspath

import "testing"

// TestUnsafeGitPath follows git's t/t0060 and fsck cases: every spelling
// some file system resolves to .git is refused, look-alikes are not.
func TestUnsafeGitPath(t *testing.T) {
	cases := []struct {
		path   string
		link   bool
		refuse bool
	}{
		{".git/config", false, true},
		{".GIT/config", false, true},
		{"a/.Git/hooks/x", false, true},
		{"a/b/.git", false, true},
		{".git./x", false, true},
		{".git. . /x", false, true},
		{".git::$INDEX_ALLOCATION/x", false, true},
		{"GIT~1/config", false, true},
		{"git~1", false, true},
		{`a\.git\hooks`, false, true},
		{".g\u200cit/x", false, true},
		{"\ufeff.git/x", false, true},
		{".gi\u200dT/x", false, true},
		{"a//b", false, true},
		{"a/../b", false, true},
		{"./a", false, true},
		{"/etc/passwd", false, true},
		{"", false, true},
		{".gitmodules", true, true},
		{".GITMODULES ", true, true},
		{"sub/gitmod~1", true, true},
		{"GI7EBA~1", true, true},
		{".gitmodules", false, false},
		{".github/ci.yml", false, false},
		{".githooks/pre-commit", false, false},
		{"git~2/x", false, false},
		{".gitx", false, false},
		{"a.git/x", false, false},
		{".gitignore", true, false},
		{"docs/README.md", false, false},
	}
	for _, c := range cases {
		if got := GitUnsafe(c.path, c.link) != ""; got != c.refuse {
			t.Errorf("GitUnsafe(%q, link=%v) refuses=%v, want %v", c.path, c.link, got, c.refuse)
		}
	}
}
