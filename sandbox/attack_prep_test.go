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

// TestAttackPreparedRootIsReadOnly: what a spare init prepared while it
// waited (the host's /usr, /opt, /etc entries and usr-merge links,
// /proc/sys) is as read-only in the box that takes it as in one built
// afresh: every mount in the box's table is read-only but the box's own
// scratch (workspace, /tmp, home, /dev, /dev/shm, /proc and its device
// nodes), recursive submounts included, and writing there fails even as
// the owner the files' permissions name.
func TestAttackPreparedRootIsReadOnly(t *testing.T) {
	pooledBox(t, sandbox.Policy{}).Close()
	preparedMounts(t, sandbox.SpareInit())
	b := pooledBox(t, sandbox.Policy{})
	res := sh(t, b, `cat /proc/self/mountinfo`)
	writable := map[string]bool{"/work": true, "/tmp": true, sandbox.HomeDir: true, "/dev": true, "/dev/shm": true, "/proc": true}
	for _, n := range []string{"null", "zero", "full", "random", "urandom", "tty"} {
		writable["/dev/"+n] = true
	}
	system := 0
	for _, l := range strings.Split(string(res.Output), "\n") {
		f := strings.Fields(l)
		if len(f) < 6 || writable[f[4]] {
			continue
		}
		if strings.HasPrefix(f[4], "/usr") || strings.HasPrefix(f[4], "/etc/") {
			system++
		}
		if f[5] != "ro" && !strings.HasPrefix(f[5], "ro,") {
			t.Errorf("BREACH: %s is mounted %s in a box from a prepared root", f[4], f[5])
		}
	}
	if system == 0 {
		t.Fatalf("no /usr or /etc mounts in the box (the test proves nothing):\n%s", res.Output)
	}
	res = sh(t, b, `for f in /usr/left-by-box /etc/ld.so.cache /etc/ssl/certs/left-by-box /opt/left-by-box /left-by-box /proc/sys/kernel/hostname; do
  (echo x >> $f) 2>/dev/null && echo "BREACH: wrote $f"
done; true`)
	if strings.Contains(string(res.Output), "BREACH") {
		t.Fatalf("a box from a prepared root writes its system:\n%s", res.Output)
	}
}

// TestPreparedRootShowsHostEtcOfNow: a host /etc entry replaced (renamed
// over, as ldconfig and update-ca-certificates do) or added after a
// spare init bound the host's entries is shown as it is now in the box
// that takes that spare, not as it was when the spare was prepared (a
// certificate taken away must not stay trusted in the next box).
func TestPreparedRootShowsHostEtcOfNow(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("writing the host's /etc needs root")
	}
	// Names etcGlobs match (python3*), unique to this test.
	name := fmt.Sprintf("python3-sandgate-redprep-%d", os.Getpid())
	entry, added := filepath.Join("/etc", name), filepath.Join("/etc", name+"-added")
	t.Cleanup(func() { os.Remove(entry); os.Remove(entry + ".new"); os.Remove(added) })
	if err := os.WriteFile(entry, []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	pooledBox(t, sandbox.Policy{}).Close()
	spare := sandbox.SpareInit()
	preparedMounts(t, spare) // the spare bound the old entry
	if err := os.WriteFile(entry+".new", []byte("new\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(entry+".new", entry); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(added, []byte("added\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	b, _ := newBox(t, sandbox.Policy{})
	if sandbox.InitPID(b) != spare {
		t.Skip("the spare was thrown away (the host's mounts changed): nothing to check")
	}
	res := sh(t, b, fmt.Sprintf("cat %s %s", entry, added))
	if string(res.Output) != "new\nadded\n" {
		t.Fatalf("BREACH: the box shows the host's /etc as the spare prepared it, not as it is now: %q", res.Output)
	}
}
