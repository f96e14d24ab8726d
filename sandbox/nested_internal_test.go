//go:build linux

package sandbox

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"
)

// TestNestedUserMode runs the path a harness that is not root takes: each
// command in a user namespace of its own, uid 1000 mapped onto the box's
// uid 0. The command must still have no capabilities, be unable to read
// init's memory or environment, reach its control socket or stop it, and
// be able to work in /work.
func TestNestedUserMode(t *testing.T) {
	b := nestedBox(t)
	script := `id -u; grep -E '^Cap(Prm|Eff|Amb):' /proc/self/status;
cat /proc/1/environ >/dev/null 2>&1 && echo BREACH-environ;
cat /proc/1/mem >/dev/null 2>&1 && echo BREACH-mem;
readlink /proc/1/fd/3 >/dev/null 2>&1 && echo BREACH-fd-link;
echo '{"id":1}' 2>/dev/null >/proc/1/fd/3 && echo BREACH-fd-write;
kill -STOP 1 2>/dev/null; echo x > /work/ok && echo wrote`
	res, err := b.Exec(context.Background(), Command{Args: []string{"sh", "-c", script}, Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	out := string(res.Output)
	if !strings.HasPrefix(out, "1000\n") || strings.Contains(out, "BREACH") || !strings.Contains(out, "wrote") {
		t.Fatalf("nested-user command:\n%s", out)
	}
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "Cap") && strings.Trim(strings.Fields(l)[1], "0") != "" {
			t.Errorf("BREACH: %s", l)
		}
	}
	// Init still answers: nothing stopped it.
	if res, err := b.Exec(context.Background(), Command{Args: []string{"true"}, Timeout: 10 * time.Second}); err != nil || res.ExitCode != 0 {
		t.Fatalf("init after the attack: %v %+v", err, res)
	}
}

// nestedBox starts a box on the path a harness that is not root takes
// (pretendNotRoot), closed with the test. Starting a box still needs root
// for its cgroups and disk image.
func nestedBox(t *testing.T) *Box {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root for cgroups and the disk image; this is the non-root path run as root")
	}
	pretendNotRoot.Store(true)
	t.Cleanup(func() { pretendNotRoot.Store(false) })
	b, err := Start(context.Background(), Options{Workspace: t.TempDir(), StateDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}
