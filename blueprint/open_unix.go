//go:build unix

package blueprint

import "syscall"

// openFlags opens a FIFO without waiting for a writer, so Load can see
// what it is and refuse it instead of hanging.
const openFlags = syscall.O_NONBLOCK
