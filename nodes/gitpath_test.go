package nodes

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
		if got := unsafeGitPath(c.path, c.link) != ""; got != c.refuse {
			t.Errorf("unsafeGitPath(%q, link=%v) refuses=%v, want %v", c.path, c.link, got, c.refuse)
		}
	}
}

func TestGitmodulesLines(t *testing.T) {
	cases := []struct {
		line string
		ok   bool
	}{
		{"url = ../lib.git", true},
		{"url = ./lib", true},
		{"URL = https://example.com/lib.git", false},
		{"url = --upload-pack=touch /tmp/x", false},
		{"url = ../x%0a", false},
		{"url = \"../x\"", false},
		{"url = ../x\\", false},
		{"url", false},
		{"path = ../../outside", false},
		{"path = -x", false},
		{"path = vendor/.git/x", false},
		{"path = vendor/lib", true},
		{"update = !sh -c x", false},
		{"update = rebase", true},
		{"branch = main", true},
	}
	for _, c := range cases {
		if err := gitmodulesKey(c.line); (err == nil) != c.ok {
			t.Errorf("%q: err %v, want ok=%v", c.line, err, c.ok)
		}
	}
	headers := map[string]bool{`[submodule "lib"]`: true, `[submodule "../../x"]`: false, "[submodule\t\"x\"]": false,
		`[submodule.x]`: false, `[core]`: true, `[submodule "a"] url = https://x`: false, `[submodule]`: true}
	for h, ok := range headers {
		if _, err := gitmodulesSection(h); (err == nil) != ok {
			t.Errorf("%q: err %v, want ok=%v", h, err, ok)
		}
	}
}
