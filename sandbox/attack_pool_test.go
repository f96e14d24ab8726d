//go:build linux

package sandbox_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/sandgate/sandgate/sandbox"
)

// pooledBox starts a box whose init came from the pool of inits started
// ahead. The pool throws a spare away when the host's mount table
// changed since it was forked (other tests on the machine mount), so a
// few tries are allowed; a box that never comes from the pool fails the
// test, which would otherwise prove nothing.
func pooledBox(t *testing.T, p sandbox.Policy) *sandbox.Box {
	t.Helper()
	b, _ := pooledBoxWS(t, p)
	return b
}

// TestAttackPooledBoxSeesNothingOfThePrevious: a box whose init was
// started ahead sees nothing a box before it left: no file in its /tmp,
// home, /dev/shm or workspace, no process (one left running in the
// background, detached), no environment variable it was given.
func TestAttackPooledBoxSeesNothingOfThePrevious(t *testing.T) {
	t.Setenv("SANDGATE_PREVIOUS_SECRET", "hunter2")
	a := pooledBox(t, sandbox.Policy{Env: []string{"SANDGATE_PREVIOUS_SECRET"}})
	if res := sh(t, a, `echo $SANDGATE_PREVIOUS_SECRET`); strings.TrimSpace(string(res.Output)) != "hunter2" {
		t.Fatalf("the first box lacks its variable (the test proves nothing): %q", res.Output)
	}
	res := sh(t, a, `for d in /tmp $HOME /dev/shm /work; do echo left > $d/left-by-a || exit 1; done
setsid sh -c 'exec sleep 987654' </dev/null >/dev/null 2>&1 &
echo ok`)
	if res.ExitCode != 0 {
		t.Fatalf("the first box could not leave its traces: %s", res.Output)
	}
	a.Close()
	b := pooledBox(t, sandbox.Policy{})
	res = sh(t, b, `for d in /tmp $HOME /dev/shm /work; do cat $d/left-by-a 2>/dev/null && echo "BREACH: $d/left-by-a"; done
for p in /proc/[0-9]*; do c=$(tr '\0' ' ' < $p/cmdline 2>/dev/null); case "$c" in *98765[4]*) echo "BREACH: process $p: $c";; esac; done
env | grep -E 'SANDGATE|hunter2' | sed 's/^/BREACH: env /'
true`)
	if strings.Contains(string(res.Output), "BREACH") || res.ExitCode != 0 {
		t.Fatalf("a pooled box sees what the box before it left:\n%s", res.Output)
	}
	// Nor on the host: closing the first box killed its detached process.
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	if len(procs) == 0 {
		t.Fatal("cannot list the host's processes")
	}
	for _, p := range procs {
		if c, err := os.ReadFile(p); err == nil && strings.Contains(string(c), "987654") {
			t.Errorf("BREACH: the first box's process outlived it: %s %q", p, c)
		}
	}
}

// TestAttackBoxCannotReachTheSpareInit: while a box runs, the init
// started ahead for the next box waits on the host, and nothing in the
// box can see it, signal it or read its /proc; it is still waiting,
// untouched, for the box that takes it.
func TestAttackBoxCannotReachTheSpareInit(t *testing.T) {
	b := pooledBox(t, sandbox.Policy{})
	spare := sandbox.SpareInit()
	if spare == 0 {
		t.Fatal("no spare init while a box runs")
	}
	script := fmt.Sprintf(`ls -d /proc/%[1]d && echo "BREACH: sees /proc/%[1]d"
kill -0 %[1]d 2>/dev/null && echo "BREACH: can signal %[1]d"
kill -KILL %[1]d 2>/dev/null
true`, spare)
	if res := sh(t, b, script); strings.Contains(string(res.Output), "BREACH") {
		t.Fatalf("the box reaches the spare init (host pid %d):\n%s", spare, res.Output)
	}
	if err := syscall.Kill(spare, 0); err != nil {
		t.Fatalf("the spare init is gone after the box's attempts: %v", err)
	}
	if sandbox.SpareInit() != spare {
		t.Fatal("the spare init was replaced while the box ran")
	}
	b.Close()
	next, _ := newBox(t, sandbox.Policy{})
	if !sandbox.Pooled(next) {
		t.Skip("the spare was thrown away (the host's mounts changed): nothing more to check")
	}
	if res := sh(t, next, "echo fine"); strings.TrimSpace(string(res.Output)) != "fine" {
		t.Fatalf("the box that took the spare does not work: %q", res.Output)
	}
}

// TestPooledInitSeesTheHostMountsOfNow: an init started ahead copied the
// host's mount table as it was forked. A mount made since must be shown
// in the box that takes it, and one removed since must not be (it could
// be anything the host took away); a spare from before the change is
// thrown away.
func TestPooledInitSeesTheHostMountsOfNow(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting on the host needs root")
	}
	dir, err := os.MkdirTemp("/var/tmp", "sandgate-pool-") // not under the box's /tmp
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	old, fresh := filepath.Join(dir, "old"), filepath.Join(dir, "fresh")
	for _, d := range []string{old, fresh} {
		os.Mkdir(d, 0o755)
	}
	if err := syscall.Mount("tmpfs", old, "tmpfs", 0, "size=1m"); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(old, "gone"), []byte("taken away\n"), 0o644)
	os.Chmod(dir, 0o755)
	pooledBox(t, sandbox.Policy{}).Close() // a spare forked while old is mounted
	if sandbox.SpareInit() == 0 {
		t.Fatal("no spare init")
	}
	if err := syscall.Unmount(old, 0); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount("tmpfs", fresh, "tmpfs", 0, "size=1m"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Unmount(fresh, syscall.MNT_DETACH) })
	os.WriteFile(filepath.Join(fresh, "new"), []byte("shown\n"), 0o644)
	b, _ := newBox(t, sandbox.Policy{ReadOnly: []string{dir}})
	res := sh(t, b, fmt.Sprintf("cat %s/new; cat %s/gone 2>/dev/null && echo BREACH; true", fresh, old))
	if string(res.Output) != "shown\n" {
		t.Fatalf("the box shows the host's mounts as they were when its init was forked, not now (pooled %v): %q", sandbox.Pooled(b), res.Output)
	}
}

// TestPooledBoxKeepsAResumedRunsDisk: a box started again on the state
// of one that was closed (a resumed run) keeps its disk, with what the
// first box wrote, even when its init and a new disk were made ahead;
// and a new box never gets that disk.
func TestPooledBoxKeepsAResumedRunsDisk(t *testing.T) {
	pooledBox(t, sandbox.Policy{}).Close() // fill the pool
	state := t.TempDir()
	start := func() *sandbox.Box {
		b, err := sandbox.Start(context.Background(), sandbox.Options{Workspace: t.TempDir(), StateDir: state})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { b.Close() })
		return b
	}
	a := start()
	if res := sh(t, a, "echo kept > $HOME/state"); res.ExitCode != 0 {
		t.Fatalf("%s", res.Output)
	}
	a.Close()
	b := start()
	if res := sh(t, b, "cat $HOME/state"); string(res.Output) != "kept\n" {
		t.Fatalf("the resumed box lost its disk (pooled init %v): %q", sandbox.Pooled(b), res.Output)
	}
	b.Close()
	if res := sh(t, pooledBox(t, sandbox.Policy{}), "cat $HOME/state 2>/dev/null && echo BREACH; true"); strings.Contains(string(res.Output), "BREACH") {
		t.Fatalf("a new box got another run's disk: %q", res.Output)
	}
}

// TestPooledBoxFailsClosed: a disk made ahead is no way around what a
// disk needs: on a host that could not format one (no mkfs.ext4), a box
// fails to start even when its init and disk were ready.
func TestPooledBoxFailsClosed(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("a rootless box's disk is a tmpfs and needs no mkfs.ext4")
	}
	pooledBox(t, sandbox.Policy{}).Close()
	if sandbox.SpareInit() == 0 {
		t.Fatal("no spare init")
	}
	t.Setenv("PATH", t.TempDir())
	b, err := sandbox.Start(context.Background(), sandbox.Options{Workspace: t.TempDir(), StateDir: t.TempDir()})
	if err == nil {
		b.Close()
		t.Fatal("a box started from the pool on a host without mkfs.ext4")
	}
	if !strings.Contains(err.Error(), "mkfs.ext4") || !errors.Is(err, sandbox.ErrUnavailable) {
		t.Fatalf("the error does not name what is missing: %v", err)
	}
}
