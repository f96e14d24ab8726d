package gitstore

import (
	"io"
	"strings"
	"testing"
)

func sideOf(s string) opener {
	return func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(s)), nil }
}

// TestLongLinesCountPerBlock: a line counts once per 4 KiB begun, so one
// 8 MB line is 2,048 lines and not one; the streaming count of a large
// file and the diff's count agree.
func TestLongLinesCountPerBlock(t *testing.T) {
	x := func(n int) string { return strings.Repeat("x", n) }
	cases := []struct {
		text string
		want int
	}{
		{"", 0},
		{"a", 1},
		{"a\n", 1},
		{"a\nb", 2},
		{"\n\n", 2},
		{x(LongLine), 1},
		{x(LongLine+1) + "\n", 2},
		{x(8<<20) + "\n", 2048},
		{"a\n" + x(3*LongLine) + "\nb\n", 5},
		{x(200<<10) + "\n" + x(70<<10), 50 + 18},
	}
	for _, c := range cases {
		if got := countLines(c.text); got != c.want {
			t.Errorf("countLines(%d bytes) = %d, want %d", len(c.text), got, c.want)
		}
		if got, err := countSideLines(sideOf(c.text)); err != nil || got != c.want {
			t.Errorf("countSideLines(%d bytes) = %d %v, want %d", len(c.text), got, err, c.want)
		}
	}
}

func FuzzCountLines(f *testing.F) {
	f.Add("a\nb", 3)
	f.Fuzz(func(t *testing.T, s string, n int) {
		s = strings.Repeat(s, 1+(n&0xff)) // long lines from short seeds
		if a, err := countSideLines(sideOf(s)); err != nil || a != countLines(s) {
			t.Fatalf("streaming count %d (%v), diff count %d", a, err, countLines(s))
		}
	})
}
