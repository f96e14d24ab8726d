package gitstore

import (
	"slices"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing/object"
)

// TestAttackIgnoreHostileNames: new files named like options, pathspec
// magic, with newlines, quotes, backslashes, glob characters and bytes
// that are not UTF-8 go through git check-ignore on stdin. None may be
// read as anything but a path: the commit's tree is the one `git add -A`
// writes and the ignored list exactly the .log files.
func TestAttackIgnoreHostileNames(t *testing.T) {
	names := []string{"-n.log", "--stdin.log", ":(exclude)x.log", "new\nline.log", "q\"uote.log", "back\\slash.log",
		"\xff\xfe.log", "sp ace.log", "*.log", "[ab].log", "keep\nme.txt", "-v", "\\#x.txt", "tab\t.txt"}
	f := newIgnoreFixture(t, map[string]string{".gitignore": "*.log\n", "a.go": "package a\n"}, nil, func(dir string) {
		files := map[string]string{}
		for _, n := range names {
			files[n] = "x"
		}
		write(t, dir, files)
	})
	p := f.p
	c, err := p.CommitChange(p.Base(), f.changes, "test\n", object.Signature{Name: "t", Email: "t@example.com", When: time.Unix(0, 0).UTC()})
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, n := range names {
		if len(n) > 4 && n[len(n)-4:] == ".log" {
			want = append(want, n)
		}
	}
	slices.Sort(want)
	if !slices.Equal(c.Ignored, want) {
		t.Errorf("ignored:\n got %q\nwant %q", c.Ignored, want)
	}
	if oracle := f.oracle(t); c.TreeHash.String() != oracle {
		t.Fatalf("the commit's tree %s differs from git add -A's %s", c.TreeHash, oracle)
	}
}
