package runtime

import (
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestCollapseLines(t *testing.T) {
	many := func(n int, f func(i int) string) string {
		var b strings.Builder
		for i := range n {
			b.WriteString(f(i) + "\n")
		}
		return b.String()
	}
	cases := []struct {
		name, in string
		max      int
		want     string
	}{
		{"empty", "", 100, ""},
		{"distinct lines stay", "a\nb\nc\n", 100, "a\nb\nc"},
		{"identical lines", "same\nsame\nsame\n", 100, "same\n… 2 similar lines"},
		{"two similar lines", "took 1s\ntook 2s\n", 100, "took 1s\n… 1 similar line"},
		{"numbers differ", many(144, func(i int) string { return "--- FAIL: TestAdd/case_" + strconv.Itoa(i) + " (0.00s)" }), 1000,
			"--- FAIL: TestAdd/case_0 (0.00s)\n… 143 similar lines"},
		{"positions differ", "calc_test.go:12: want 5\nother/x_test.go:40:3: want 6\nok\n", 100, "calc_test.go:12: want 5\n… 1 similar line\nok"},
		{"hashes differ", "object deadbeef1 missing\nobject 0abc1234 missing\n", 100, "object deadbeef1 missing\n… 1 similar line"},
		{"only consecutive", "x 1\ny\nx 2\n", 100, "x 1\ny\nx 2"},
		{"words differ", "want 5, got apple\nwant 5, got pear\n", 100, "want 5, got apple\nwant 5, got pear"},
		{"capped at a line", many(10, func(i int) string { return strings.Repeat(string(rune('a'+i)), 10) }), 60,
			"aaaaaaaaaa\nbbbbbbbbbb\ncccccccccc\n… 7 more lines cut"},
		{"one long line", strings.Repeat("é", 100), 40, strings.Repeat("é", 9) + "\n… 1 more lines cut"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := collapseLines(c.in, c.max); got != c.want {
				t.Errorf("collapseLines(%q, %d)\n got %q\nwant %q", c.in, c.max, got, c.want)
			}
		})
	}
}

// FuzzCollapseLines checks what a reader relies on: runs cover every line
// once, in order, each run's lines look alike and neighbours do not; the
// text stays within its cap, stays valid UTF-8, and every line of it is an
// input line, a cut first line or a note of the collapse.
func FuzzCollapseLines(f *testing.F) {
	f.Add("a\na\nb 1\nb 2\n", 200)
	f.Add("x.go:1: e\ny.go:2:3: e\n\n\n", 64)
	f.Add(strings.Repeat("€", 50), 70)
	f.Fuzz(func(t *testing.T, s string, max int) {
		max = 64 + abs(max)%4096
		lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
		runs := runsOf(lines)
		i := 0
		for k, r := range runs {
			if r.n < 1 || lines[i] != r.first {
				t.Fatalf("run %d starts at %q with %d lines, want line %d %q", k, r.first, r.n, i, lines[i])
			}
			for j := i; j < i+r.n; j++ {
				if lineShape(lines[j]) != lineShape(r.first) {
					t.Fatalf("line %d %q is in the run of %q", j, lines[j], r.first)
				}
			}
			if k > 0 && lineShape(runs[k-1].first) == lineShape(r.first) {
				t.Fatalf("runs %d and %d have one shape", k-1, k)
			}
			i += r.n
		}
		if i != len(lines) {
			t.Fatalf("runs cover %d of %d lines", i, len(lines))
		}
		out := collapseLines(s, max)
		if len(out) > max {
			t.Fatalf("%d bytes, cap %d", len(out), max)
		}
		if utf8.ValidString(s) && !utf8.ValidString(out) {
			t.Fatalf("invalid UTF-8 from valid input: %q", out)
		}
		inputs := map[string]bool{}
		for _, l := range lines {
			inputs[l] = true
		}
		for k, l := range strings.Split(out, "\n") {
			if out == "" || inputs[l] || strings.HasPrefix(l, "… ") || (k == 0 && strings.HasPrefix(lines[0], l)) {
				continue
			}
			t.Fatalf("output line %q is not from the input", l)
		}
	})
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}
