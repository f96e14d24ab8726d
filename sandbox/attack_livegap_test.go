//go:build linux

package sandbox_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sandgate/sandgate/sandbox"
	"github.com/sandgate/sandgate/secrets"
)

// gappedWriter prints a credential whose middle Live's queue leaves out:
// a first line (for the consumer to block on), output that fills the
// queue to 4 bytes short of its cap, the credential's start, on the next
// tick its middle (past the cap: left out), and, once the harness has
// caught up ("go"), its end.
const gappedWriter = `
import os, sys, time
s = sys.argv[1].encode()
def w(b):
    while b:
        b = b[os.write(1, b):]
w(b"start " * 10 + b"\n"); time.sleep(0.5)
fill = (4 << 20) - 4 - 6
w((b"." * 63 + b"\n") * (fill // 64) + b"." * (fill % 64) + s[:6]); time.sleep(0.5)
w(s[6:14]); time.sleep(0.5)
open("filled", "w").close()
while not os.path.exists("go"):
    time.sleep(0.05)
w(s[14:] + b" after\n")
`

// gate is a Live destination that holds its first write until released,
// as a slow reader of output.log would.
type gate struct {
	release chan struct{}
	once    sync.Once
	liveBuf
}

func (g *gate) Write(p []byte) (int, error) {
	g.once.Do(func() { <-g.release })
	return g.liveBuf.Write(p)
}

// TestAttackLiveGapRedacts: a command's output that Live's queue leaves
// out while its consumer is slow cuts a credential in two; Live through
// a redacting stream (as the nodes' output.log is written) still gets no
// piece of it of 4 bytes or more, on either side of the gap.
func TestAttackLiveGapRedacts(t *testing.T) {
	b, ws := newBox(t, sandbox.Policy{})
	const secret = "tok-0a1b2c3d4e5f6a7b"
	r := secrets.New(map[string]string{"API_TOKEN": secret})
	g := &gate{release: make(chan struct{})}
	w := r.Stream(g)
	go func() {
		for !exists(filepath.Join(ws, "filled")) {
			time.Sleep(20 * time.Millisecond)
		}
		close(g.release)
		for len(g.String()) < 4<<20-100 { // the queue is drained: room again
			time.Sleep(20 * time.Millisecond)
		}
		_ = os.WriteFile(filepath.Join(ws, "go"), nil, 0o644)
	}()
	res, err := b.Exec(context.Background(), sandbox.Command{Args: []string{"python3", "-c", gappedWriter, secret}, Timeout: time.Minute, OutputBytes: 8 << 20, Live: w})
	w.Close()
	if err != nil || res.ExitCode != 0 || !strings.Contains(string(res.Output), secret) {
		t.Fatalf("exec: %v %+v", err, res)
	}
	got := g.String()
	if !strings.Contains(got, " after\n") || !strings.Contains(got, "bytes of output not shown live]") {
		t.Fatalf("Live did not get the output after a gap: ends %q", got[max(0, len(got)-200):])
	}
	for i := 0; i+4 <= len(secret); i++ {
		if p := secret[i : i+4]; strings.Contains(got, p) {
			t.Fatalf("BREACH: Live got %q of the credential: %q", p, got[len(got)-200:])
		}
	}
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
