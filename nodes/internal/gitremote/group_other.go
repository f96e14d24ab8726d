//go:build !unix

package gitremote

import "os/exec"

// inGroup off Unix keeps exec's default cancel (kill git itself): there
// are no process groups to kill, and pushes run only where boxes do
// (Linux); the package still builds so the library does.
func inGroup(cmd *exec.Cmd) {}
