//go:build linux

package sandbox_test

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sandgate/sandgate/sandbox"
)

// TestAttackChangesFollowHostLinks: the harness reads the workspace's
// changes on the host, as root, while another node's command may still be
// running. That command swaps a workspace directory with a symbolic link
// to a host directory as fast as it can; a harness that follows the link
// between its checks reads the host's file into the change list (and from
// there into a commit or a reviewer's diff).
func TestAttackChangesFollowHostLinks(t *testing.T) {
	for _, mode := range []struct {
		name      string
		noOverlay bool
	}{{"overlay", false}, {"copy", true}} {
		t.Run(mode.name, func(t *testing.T) { attackChangesRace(t, mode.noOverlay) })
	}
}

func attackChangesRace(t *testing.T, noOverlay bool) {
	secretDir := t.TempDir()
	if err := os.WriteFile(filepath.Join(secretDir, "id_host"), []byte("canary-host-9e41"), 0o600); err != nil {
		t.Fatal(err)
	}
	snap, b := snapshotBox(t, noOverlay)
	bin, err := os.ReadFile(intruderBinary(t))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan string, 1)
	go func() {
		script := "cat > /tmp/intruder && chmod +x /tmp/intruder && SANDGATE_ATTACK=swap SANDGATE_SWAP_DIR=" + secretDir + " SANDGATE_SWAP_FILE=id_host /tmp/intruder"
		res, err := b.Exec(context.Background(), sandbox.Command{Args: []string{"sh", "-c", script}, Stdin: bin, Timeout: 2 * time.Minute})
		if err != nil {
			done <- err.Error()
			return
		}
		done <- string(res.Output)
	}()
	view := b.Upper()
	if noOverlay {
		view = b.Merged()
	}
	waitFor(t, filepath.Join(view, "swap-up"))
	breached := false
	for i := 0; i < 3000 && !breached; i++ {
		changes, _ := sandbox.Changes(snap, b.Upper(), b.Merged())
		for _, c := range changes {
			if c.Deleted || c.Link != "" || !c.Mode.IsRegular() {
				continue
			}
			r, err := c.Open()
			if err != nil {
				continue // refused as changed: what the harness must do in a race
			}
			data, _ := io.ReadAll(r)
			r.Close()
			if strings.Contains(string(data), "canary-host") {
				t.Errorf("BREACH: after %d reads the change list holds the host's %s as %s", i+1, filepath.Join(secretDir, "id_host"), c.Path)
				breached = true
			}
		}
	}
	sh(t, b, "touch /work/swap-stop")
	out := <-done
	if !strings.Contains(out, "held: swapped") {
		t.Fatalf("the intruder did not run:\n%s", out)
	}
}
