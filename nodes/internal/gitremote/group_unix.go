//go:build unix

package gitremote

import (
	"os/exec"
	"syscall"
)

// inGroup puts cmd in a process group of its own and kills the whole group
// when its context ends, so receive-pack, the remote's hooks and the HTTP
// helper that git started die with it.
func inGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
}
