package words

import "testing"

func TestCountHidden(t *testing.T) {
	for in, want := range map[string]int{"  a\tb c ": 3, "": 0, "\n": 0, "one two": 2} {
		if got := Count(in); got != want {
			t.Errorf("Count(%q) = %d, want %d", in, got, want)
		}
	}
}
