//go:build linux

package sandbox

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestInitNeverJoinsCommandCgroups: init's main thread (its pid) must
// never sit in the commands' pids or memory cgroup, whatever thread ran a
// command; otherwise an OOM among commands can pick init.
func TestInitNeverJoinsCommandCgroups(t *testing.T) {
	b, err := Start(context.Background(), Options{Workspace: t.TempDir(), StateDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if b.cg == nil || b.cg.v2 {
		t.Skip("cgroup v1 only: v2 moves commands after they start")
	}
	pid := strconv.Itoa(b.cmd.Process.Pid)
	files := []string{filepath.Join(filepath.Dir(b.cg.cmdProcs), "tasks"), b.cg.cmdMemTasks}
	for i := 0; i < 60; i++ {
		if _, err := b.Exec(context.Background(), Command{Args: []string{"true"}, Timeout: 10 * time.Second}); err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			data, _ := os.ReadFile(f)
			for _, tid := range strings.Fields(string(data)) {
				if tid == pid {
					t.Fatalf("after command %d, init's main thread %s is in %s", i, pid, f)
				}
			}
		}
	}
}
