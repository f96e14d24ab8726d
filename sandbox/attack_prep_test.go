//go:build linux

package sandbox_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sandgate/sandgate/sandbox"
)

// preparedMounts waits until the init with host pid pid has prepared its
// root (its /proc is mounted there, the last mount of the preparation)
// and returns the mount ids of what it prepared.
func preparedMounts(t *testing.T, pid int) []string {
	t.Helper()
	root := filepath.Join(sandbox.DefaultCacheDir(), "box-root")
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/mountinfo", pid))
		if err != nil {
			t.Fatalf("the spare init's mounts: %v", err)
		}
		var ids []string
		done := false
		for _, l := range strings.Split(string(b), "\n") {
			f := strings.Fields(l)
			if len(f) < 5 || (f[4] != root && !strings.HasPrefix(f[4], root+"/")) {
				continue
			}
			ids = append(ids, f[0])
			done = done || f[4] == root+"/proc"
		}
		if done {
			return ids
		}
	}
	t.Fatal("the spare init never prepared its root")
	return nil
}

// TestAttackPreviousBoxCannotReachThePreparedRoot: the init started
// ahead for the next box builds the part of its root no option changes
// (/etc, the system directories, /dev, /dev/shm, /proc) while the box
// before it runs. That box's code finds none of those mounts, and
// nothing it does (writing everywhere it can, renaming the host, taking
// its loopback down) reaches them: the box that takes the init gets
// them as they were made, pristine.
func TestAttackPreviousBoxCannotReachThePreparedRoot(t *testing.T) {
	a := pooledBox(t, sandbox.Policy{})
	spare := sandbox.SpareInit()
	if spare == 0 {
		t.Fatal("no spare init while a box runs")
	}
	ids := preparedMounts(t, spare)
	res := sh(t, a, `for f in /etc/passwd /etc/hosts /etc/resolv.conf /etc/hostname /etc/ld.so.cache /etc/left-by-a \
  /dev/left-by-a /dev/shm/left-by-a /proc/sys/kernel/hostname /usr/left-by-a /left-by-a; do
  echo left-by-a >> $f 2>/dev/null
done
hostname left-by-a 2>/dev/null; ip link set lo down 2>/dev/null
echo MOUNTS; cat /proc/[0-9]*/mountinfo /proc/self/mountinfo 2>/dev/null | cut -d' ' -f1 | sort -u`)
	_, seen, ok := strings.Cut(string(res.Output), "MOUNTS\n")
	if !ok || len(strings.Fields(seen)) == 0 {
		t.Fatalf("the box could not list its mounts (the test proves nothing): %q", res.Output)
	}
	for _, id := range strings.Fields(seen) {
		for _, p := range ids {
			if id == p {
				t.Errorf("BREACH: the box sees mount %s of the next box's prepared root", id)
			}
		}
	}
	a.Close()
	b := pooledBox(t, sandbox.Policy{})
	if sandbox.InitPID(b) != spare {
		t.Skip("the spare was thrown away (the host's mounts changed): nothing more to check")
	}
	res = sh(t, b, `grep -rl left-by-a /etc /dev/shm 2>/dev/null | sed 's/^/BREACH: /'
for f in /dev/left-by-a /usr/left-by-a /left-by-a; do [ -e $f ] && echo "BREACH: $f"; done
grep -q '^sandbox:x:' /etc/passwd || echo "BREACH: /etc/passwd is not the generated one"
[ "$(hostname)" = sandbox ] || echo "BREACH: hostname $(hostname)"
echo MOUNTS; cut -d' ' -f1 /proc/self/mountinfo`)
	out, mounts, _ := strings.Cut(string(res.Output), "MOUNTS\n")
	if strings.Contains(out, "BREACH") || res.ExitCode != 0 {
		t.Fatalf("the box before changed the prepared root:\n%s", out)
	}
	// The box runs in the very mounts prepared while the attack ran (or
	// this test proved nothing).
	have := map[string]bool{}
	for _, id := range strings.Fields(mounts) {
		have[id] = true
	}
	shown := 0
	for _, p := range ids {
		if have[p] {
			shown++
		}
	}
	if shown < 3 {
		t.Fatalf("the box that took the spare runs in %d of its %d prepared mounts", shown, len(ids))
	}
}

// TestPreparedRootYieldsToWideReadOnlyPaths: a read-only path that an
// unprepared init would cover with the box's own /dev or /proc gets a
// root built afresh, in that order: the box still has its own /dev and
// /proc, not the host's (shown over the prepared ones, the host's
// devices and processes would be the box's).
func TestPreparedRootYieldsToWideReadOnlyPaths(t *testing.T) {
	pooledBox(t, sandbox.Policy{}).Close()
	b, _ := newBox(t, sandbox.Policy{ReadOnly: []string{"/dev", "/proc"}})
	res := sh(t, b, `[ -e /dev/kmsg ] && echo "BREACH: the host's /dev"
n=$(ls -d /proc/[0-9]* | wc -l); [ $n -gt 20 ] && echo "BREACH: the host's /proc ($n processes)"
[ "$(hostname)" = sandbox ] || echo "BREACH: hostname $(hostname)"
ls /usr/bin >/dev/null || echo "BREACH: no /usr"`)
	if strings.Contains(string(res.Output), "BREACH") || res.ExitCode != 0 {
		t.Fatalf("host /dev and /proc read-only cover the box's own mounts (pooled %v):\n%s", sandbox.Pooled(b), res.Output)
	}
}
