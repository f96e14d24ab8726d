package calc

import "testing"

func TestAddGate(t *testing.T) {
	for _, c := range []struct{ a, b, want int }{{1, 1, 2}, {10, -3, 7}} {
		if got := Add(c.a, c.b); got != c.want {
			t.Errorf("Add(%d, %d) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}
