package lines

import "testing"

func TestFirst(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", ""},
		{"one", "one"},
		{"one\ntwo", "one"},
		{"\ntwo", ""},
		{"one\r\ntwo", "one\r"},
	} {
		if got := First(c.in); got != c.want {
			t.Errorf("First(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
