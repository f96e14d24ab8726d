package wait

import (
	"testing"
)

// TestUntil: Until returns once the condition holds, however many looks
// it takes.
func TestUntil(t *testing.T) {
	n := 0
	Until(t, "the third look", func() bool { n++; return n == 3 })
	if n != 3 {
		t.Fatalf("looked %d times", n)
	}
}
