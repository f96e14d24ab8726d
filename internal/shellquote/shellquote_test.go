package shellquote

import (
	"os/exec"
	"testing"
)

func TestQuote(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"plain/path-1.txt", "plain/path-1.txt"},
		{"", "''"},
		{"a b", "'a b'"},
		{"it's", `'it'\''s'`},
		{"$(reboot)", "'$(reboot)'"},
		{"ünïcode", "'ünïcode'"},
	} {
		if got := Quote(c.in); got != c.want {
			t.Errorf("Quote(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// FuzzQuote: the shell reads every quoted word back as exactly itself.
func FuzzQuote(f *testing.F) {
	for _, s := range []string{"a", "a b", "it's", "$x", "`x`", "\n", "-n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for i := 0; i < len(s); i++ {
			if s[i] == 0 {
				return // argv cannot hold NUL
			}
		}
		out, err := exec.Command("sh", "-c", "printf '%s' "+Quote(s)).Output()
		if err != nil || string(out) != s {
			t.Fatalf("%q quoted as %s came back as %q (%v)", s, Quote(s), out, err)
		}
	})
}
