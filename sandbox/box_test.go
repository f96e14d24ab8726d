//go:build linux

package sandbox_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/sandgate/sandgate/sandbox"
)

func TestMain(m *testing.M) {
	sandbox.Main()
	os.Exit(m.Run())
}

// newBox starts a box over a fresh workspace and closes it with the test.
func newBox(t *testing.T, p sandbox.Policy) (*sandbox.Box, string) {
	t.Helper()
	ws := t.TempDir()
	b, err := sandbox.Start(context.Background(), sandbox.Options{Policy: p, Workspace: ws, StateDir: t.TempDir(),
		AuditPath: filepath.Join(t.TempDir(), "commands.jsonl")})
	if err != nil {
		t.Fatalf("start box: %v", err)
	}
	t.Cleanup(func() { b.Close() })
	return b, ws
}

func sh(t *testing.T, b *sandbox.Box, script string) *sandbox.Result {
	t.Helper()
	res, err := b.Exec(context.Background(), sandbox.Command{Args: []string{"sh", "-c", script}, Timeout: 30 * time.Second})
	if err != nil {
		t.Fatalf("exec %q: %v", script, err)
	}
	return res
}

func TestBoxRunsCommands(t *testing.T) {
	b, ws := newBox(t, sandbox.Policy{})
	res := sh(t, b, "echo hello > out.txt && cat out.txt && hostname && pwd && echo $HOME")
	if res.ExitCode != 0 {
		t.Fatalf("exit %d: %s", res.ExitCode, res.Output)
	}
	if got := string(res.Output); got != "hello\nsandbox\n/work\n/home/sandbox\n" {
		t.Fatalf("output %q", got)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "out.txt")); string(b) != "hello\n" {
		t.Fatalf("workspace write not visible on the host: %q", b)
	}
	if res := sh(t, b, "exit 3"); res.ExitCode != 3 {
		t.Fatalf("exit code %d", res.ExitCode)
	}
	t.Logf("layers: %v", b.Layers())
}

// TestStaleCgroupsAreSwept: a harness killed with SIGKILL cannot remove
// its box's cgroups; the next box removes empty ones whose init is gone
// (as it makes its cgroups: a box from the pool, as it makes the next
// box's init).
func TestStaleCgroupsAreSwept(t *testing.T) {
	stale := "/sys/fs/cgroup/pids/sandgate-4194000"
	if err := os.Mkdir(stale, 0o755); err != nil {
		t.Skipf("cannot create a v1 pids cgroup here: %v", err)
	}
	defer os.Remove(stale)
	newBox(t, sandbox.Policy{})
	sandbox.SpareInit()
	if _, err := os.Stat(stale); err == nil {
		t.Fatal("a stale cgroup of a dead box was left in place")
	}
}
