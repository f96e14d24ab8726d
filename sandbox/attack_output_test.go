//go:build linux

package sandbox_test

import (
	"context"
	"testing"
	"time"

	"github.com/sandgate/sandgate/sandbox"
)

// TestAttackOutputKillsInit: init holds a command's captured output in its
// own memory (and encodes it again for the reply), charged to the box's
// memory cgroup outside the commands' share. A command that prints up to
// the test node's cap (64 MiB), after pinning its share with /dev/shm
// pages that belong to no process, makes init the OOM killer's choice:
// the box dies with every other node's command. Init must survive.
func TestAttackOutputKillsInit(t *testing.T) {
	b, err := sandbox.Start(context.Background(), sandbox.Options{Workspace: t.TempDir(), StateDir: t.TempDir(),
		Policy: sandbox.Policy{Limits: sandbox.Limits{MemoryBytes: 256 << 20, Pids: 64}}})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	script := "head -c 60000000 /dev/zero > /dev/shm/pin; head -c 67108864 /dev/zero"
	res, err := b.Exec(context.Background(), sandbox.Command{Args: []string{"sh", "-c", script}, Timeout: time.Minute, OutputBytes: 64 << 20})
	if err != nil {
		t.Fatalf("BREACH: a command's 64 MiB of output killed the box: %v", err)
	}
	t.Logf("output: %d bytes kept, %d dropped, exit %d", len(res.Output), res.Dropped, res.ExitCode)
	if _, err := b.Exec(context.Background(), sandbox.Command{Args: []string{"rm", "-f", "/dev/shm/pin"}}); err != nil {
		t.Fatalf("BREACH: the box died after a command's large output: %v", err)
	}
}
