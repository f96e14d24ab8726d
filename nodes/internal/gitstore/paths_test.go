package gitstore

import (
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing/object"
)

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

func TestGitattributesTokens(t *testing.T) {
	cases := map[string]bool{
		"ident": false, "text": false, "text=auto": false, "eol=lf": false, "crlf": false,
		"filter=lfs": false, "working-tree-encoding=UTF-16": false, "export-ignore": false,
		"export-subst": false, "mymacro": false,
		"-text": true, "!ident": true, "-crlf": true, "binary": true, "diff=golang": true, "-diff": true,
		"merge=union": true, "linguist-generated": true, "linguist-generated=true": true, "whitespace=trailing-space": true,
	}
	for a, ok := range cases {
		if why := unsafeAttribute(a); (why == "") != ok {
			t.Errorf("%q: %q, want ok=%v", a, why, ok)
		}
	}
	if isDotGitattributes("a/.gitattributesx") || !isDotGitattributes("a/.GitAttributes") {
		t.Error("isDotGitattributes matches the wrong names")
	}
}

// TestFoldCollision: a change adding a name that folds onto another in its
// directory (new beside base, or two new ones, at any depth) cannot be
// committed; a base's own collision does not block a change elsewhere.
func TestFoldCollision(t *testing.T) {
	sig := object.Signature{Name: "t", Email: "t@example.com", When: time.Unix(0, 0).UTC()}
	cases := []struct {
		name  string
		base  map[string]string
		write map[string]string
		ok    bool
	}{
		{"beside a base file", map[string]string{"calc.go": "package calc\n"}, map[string]string{"CALC.go": "package calc\n"}, false},
		{"two new, deep", map[string]string{"a.go": "x\n"}, map[string]string{"d/e/x.go": "1\n", "d/e/X.go": "2\n"}, false},
		{"a directory and a file", map[string]string{"a.go": "x\n"}, map[string]string{"Pkg": "1\n", "pkg/x.go": "2\n"}, false},
		{"base collision, change elsewhere", map[string]string{"r.md": "1\n", "R.md": "2\n"}, map[string]string{"new.go": "3\n"}, true},
		{"plain change", map[string]string{"calc.go": "package calc\n"}, map[string]string{"calc.go": "package calc // ok\n"}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newIgnoreFixture(t, c.base, nil, func(dir string) { write(t, dir, c.write) })
			_, err := f.p.CommitChange(f.p.Base(), f.changes, "m\n", sig)
			if (err == nil) != c.ok {
				t.Fatalf("err %v, want ok=%v", err, c.ok)
			}
			if err != nil && !strings.Contains(err.Error(), "case-insensitive") {
				t.Fatalf("err %v does not say why", err)
			}
		})
	}
}
