//go:build linux

package sandbox_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/sandgate/sandgate/sandbox"
)

// initKeepsCPUs fails unless every thread of b's init, command threads
// made after its Landlock round too, runs on want. Read from the harness:
// the box does not see init (hidepid, and commands have a pid namespace
// under init's, so they cannot name init to change its CPUs either).
func initKeepsCPUs(t *testing.T, b *sandbox.Box, box, want string) {
	t.Helper()
	// Several commands at once: init makes command threads for them.
	done := make(chan struct{})
	for j := 0; j < 3; j++ {
		go func() {
			defer func() { done <- struct{}{} }()
			_, _ = b.Exec(context.Background(), sandbox.Command{Args: []string{"sleep", "0.2"}, Timeout: 30 * time.Second})
		}()
	}
	for j := 0; j < 3; j++ {
		<-done
	}
	tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/status", sandbox.InitPID(b)))
	if err != nil || len(tasks) < 2 {
		t.Fatalf("%s: init's threads: %v %v", box, tasks, err)
	}
	for _, st := range tasks {
		status, err := os.ReadFile(st)
		if err != nil {
			continue // gone
		}
		if got := cpusAllowed(t, string(status)); got != want {
			t.Errorf("%s: init's thread %s runs on CPUs %s, the harness on %s", box, st, got, want)
		}
	}
}
