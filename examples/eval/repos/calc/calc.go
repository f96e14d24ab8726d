// Package calc does arithmetic.
package calc

// Add returns the sum of a and b.
func Add(a, b int) int {
	return a - b
}

// Double returns twice n.
func Double(n int) int {
	return n * 2
}
