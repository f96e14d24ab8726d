//go:build !unix

package main

import "time"

// cpuTime: no getrusage off Unix; the bench reports wall time only there.
func cpuTime() time.Duration { return 0 }
