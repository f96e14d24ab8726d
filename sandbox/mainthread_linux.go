//go:build linux

package sandbox

import (
	"os"
	"runtime"
)

// In a helper process (the box's init) the main goroutine keeps the main
// thread to itself. Command threads join the commands' cgroups; were the
// main thread ever one of them, the whole of init would count as a member
// (cgroup v1 lists a process under its leader thread), and an OOM among the
// commands could choose init. Package init functions run on the main
// thread, so locking here pins it before any other goroutine can take it.
func init() {
	if os.Getenv(roleEnv) != "" {
		runtime.LockOSThread()
	}
}
