package words

import "testing"

func TestCount(t *testing.T) {
	if got := Count("a  b"); got != 2 {
		t.Errorf("Count(%q) = %d, want 2", "a  b", got)
	}
}

func TestCountOne(t *testing.T) {
	if got := Count("hello"); got != 1 {
		t.Errorf("Count(%q) = %d, want 1", "hello", got)
	}
}
