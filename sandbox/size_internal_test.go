package sandbox

import (
	"strings"
	"testing"
)

// TestParseSize covers SANDGATE_CACHE_MAX's reader, which must read what
// a blueprint's sandbox.disk accepts and refuse anything else (the cache then keeps its
// default instead of evicting everything).
func TestParseSize(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"10GiB", 10 << 30, true},
		{"512MiB", 512 << 20, true},
		{"1TiB", 1 << 40, true},
		{"3KiB", 3 << 10, true},
		{"7B", 7, true},
		{"0B", 0, true},
		{"10GB", 0, false},
		{"10G", 0, false},
		{"GiB", 0, false},
		{"-1GiB", 0, false},
		{"+1GiB", 0, false},
		{"1.5GiB", 0, false},
		{"", 0, false},
		{"99999999999TiB", 0, false},
	} {
		got, err := parseSize(c.in)
		if (err == nil) != c.ok || got != c.want {
			t.Errorf("parseSize(%q) = %d, %v; want %d, ok=%v", c.in, got, err, c.want, c.ok)
		}
	}
	for _, n := range []int64{1, 4 << 30, 512 << 20, 3 << 40} {
		if got, err := parseSize(strings.ReplaceAll(FormatBytes(n), " ", "")); err != nil || got != n {
			t.Errorf("parseSize(FormatBytes(%d)) = %d, %v", n, got, err)
		}
	}
}
