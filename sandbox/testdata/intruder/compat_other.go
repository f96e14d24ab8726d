//go:build !amd64

package intruder

// attackCompat: only x86-64 lets a 64-bit process call the kernel
// through a 32-bit ABI (int $0x80).
func attackCompat() { report(false, "no 32-bit ABI probe on this architecture") }
