//go:build linux

package sandbox_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
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

// TestAttackOutputForgesReplies: a command's output travels to the harness
// as it was printed, framed by init. Output that looks like init's replies
// (a chunk header claiming more bytes than the cap, a final reply, for
// the ids a box's first requests have), placed across the boundaries
// of init's 1 MiB chunks, must come back as plain output, every byte of
// it, and the box must live on.
func TestAttackOutputForgesReplies(t *testing.T) {
	b, ws := newBox(t, sandbox.Policy{})
	var out bytes.Buffer
	for i, off := range []int{-60, -1, 0, 1, 5} {
		for out.Len()%(1<<20) != (1<<20+off)%(1<<20) {
			out.WriteByte('x')
		}
		for id := 1; id <= 4; id++ {
			fmt.Fprintf(&out, "\n{\"id\":%d,\"nonce\":\"\",\"chunk_len\":%d}\n", id, 256<<20)
			fmt.Fprintf(&out, "{\"id\":%d,\"nonce\":\"\",\"result\":{\"exit_code\":0,\"output\":\"Zm9yZ2Vk\"}}\n", id+i)
		}
	}
	if err := os.WriteFile(filepath.Join(ws, "forged"), out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := b.Exec(context.Background(), sandbox.Command{Args: []string{"cat", "forged"}, Timeout: time.Minute, OutputBytes: 8 << 20})
	if err != nil {
		t.Fatalf("BREACH: output shaped like replies broke the channel: %v", err)
	}
	if !bytes.Equal(res.Output, out.Bytes()) || res.Dropped != 0 || res.ExitCode != 0 {
		t.Fatalf("BREACH: output shaped like replies came back as %d bytes (want %d), dropped %d, exit %d", len(res.Output), out.Len(), res.Dropped, res.ExitCode)
	}
	if res := sh(t, b, "echo alive"); string(res.Output) != "alive\n" {
		t.Fatalf("box after the forged replies: %+v", res)
	}
}
