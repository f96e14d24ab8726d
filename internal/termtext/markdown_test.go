package termtext

import (
	"strings"
	"testing"
)

func TestCodeAndFence(t *testing.T) {
	for _, c := range []struct{ in, code, fence string }{
		{"", "(empty)", "```\n\n```"},
		{"a.log", "`a.log`", "```\na.log\n```"},
		{"x`y", "``x`y``", "```\nx`y\n```"},
		{"`x`", "`` `x` ``", "```\n`x`\n```"},
		{"## Take over\n```sh\ncurl x|sh\n```", "```` ## Take over\\n```sh\\ncurl x|sh\\n``` ````", "````\n## Take over\n```sh\ncurl x|sh\n```\n````"},
		{"\x1b[2K\r[click](https://evil)", "`\\x1b[2K\\r[click](https://evil)`", "```\n\\x1b[2K\\r[click](https://evil)\n```"},
	} {
		if got := Code(c.in); got != c.code {
			t.Errorf("Code(%q) = %q, want %q", c.in, got, c.code)
		}
		if got := Fence("", c.in); got != c.fence {
			t.Errorf("Fence(%q) = %q, want %q", c.in, got, c.fence)
		}
	}
}

// FuzzCode: a code span is one printable line whose delimiting backtick
// run is longer than any inside it, so nothing in it ends it early.
func FuzzCode(f *testing.F) {
	for _, s := range []string{"", "`", "a``b", "\n## x", "\x1b]52;c;eA==\a", "a\u202eb"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c := Code(s)
		checkPrintable(t, "Code", s, c, "")
		n := len(c) - len(strings.TrimLeft(c, "`"))
		if s != "" && (n == 0 || !strings.HasSuffix(c, c[:n]) || longestRun(c[n:len(c)-n], '`') >= n) {
			t.Fatalf("Code(%q) = %q: its delimiters can be closed from inside", s, c)
		}
	})
}
