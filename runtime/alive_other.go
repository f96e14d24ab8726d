//go:build !unix

package runtime

import "os"

// processExists: off Unix FindProcess fails for a pid with no process.
func processExists(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	_ = p.Release()
	return true
}
