package calc

import "testing"

func TestAdd(t *testing.T) {
	if got := Add(2, 3); got != 5 {
		t.Errorf("Add(2, 3) = %d, want 5", got)
	}
}

func TestDouble(t *testing.T) {
	if got := Double(4); got != 8 {
		t.Errorf("Double(4) = %d, want 8", got)
	}
}
