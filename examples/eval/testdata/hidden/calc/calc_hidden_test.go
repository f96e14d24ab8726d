package calc

import "testing"

func TestAddHidden(t *testing.T) {
	for _, c := range []struct{ a, b, want int }{{-4, 10, 6}, {0, 0, 0}, {7, 1, 8}} {
		if got := Add(c.a, c.b); got != c.want {
			t.Errorf("Add(%d, %d) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}
