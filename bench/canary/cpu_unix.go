//go:build unix

package main

import (
	"syscall"
	"time"
)

// cpuTime is the user and system time of this process (building the
// plan, decoding the report) and of every finished child process (and the
// children they waited for): on a shared machine it moves less with the
// load than wall time does.
func cpuTime() time.Duration {
	var sum time.Duration
	for _, who := range []int{syscall.RUSAGE_SELF, syscall.RUSAGE_CHILDREN} {
		var ru syscall.Rusage
		if syscall.Getrusage(who, &ru) == nil {
			sum += time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
		}
	}
	return sum
}
