package agent

import (
	"strings"
	"testing"
)

func TestConfine(t *testing.T) {
	ok := map[string]string{"calc.go": "/work/calc.go", "a/b/../c.go": "", "./x": "/work/x", "": "/work", "dir/": "/work/dir"}
	for in, want := range ok {
		got, err := confine(in)
		if want == "" {
			if err == nil {
				t.Errorf("%q: want an error, got %q", in, got)
			}
			continue
		}
		if err != nil || got != want {
			t.Errorf("%q: got %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"/etc/passwd", "../x", "a/../../x", ".git/config", ".git", "x\x00y"} {
		if got, err := confine(bad); err == nil {
			t.Errorf("%q: escaped to %q", bad, got)
		}
	}
}

func FuzzConfine(f *testing.F) {
	for _, s := range []string{"a", "../b", "/c", ".git/x", "a//b/./c"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		got, err := confine(p)
		if err != nil {
			return
		}
		if got != workDir && (len(got) <= len(workDir)+1 || got[:len(workDir)+1] != workDir+"/") {
			t.Fatalf("%q mapped outside the workspace: %q", p, got)
		}
		for _, part := range []string{"/../", "/.git/"} {
			if strings.Contains(got+"/", part) {
				t.Fatalf("%q mapped to %q", p, got)
			}
		}
	})
}
