package gitstore

import "testing"

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
