// Package gocanarytest holds the forgers the canary's attack tests plant:
// changes whose code, inside the test binary, rewrites the package's go
// test report. Every place tests are judged (the test gate, held-out
// tests, the ci node's command provider, eval grading) is attacked with
// the same ones. HostExec plays the box's part on the host, for tests
// and benchmarks of internal/gocanary.
package gocanarytest
