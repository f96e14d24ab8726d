//go:build linux

package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestAttackClosedBoxIsDeadWhenCloseReturns: Close lets go of the box's
// mount namespace and disk after it returns (release_linux.go), but the
// kill switch stays synchronous: when Close returns, every process the
// box started (detached, in a session of its own) is gone from the host,
// not even a zombie; no process is left in the box's mount namespace,
// which only the harness holds; the next box gets a namespace of its
// own and sees nothing the closed one left; and once released, nothing
// on the host holds the namespace or its disk any more.
func TestAttackClosedBoxIsDeadWhenCloseReturns(t *testing.T) {
	marker := fmt.Sprintf("98%d", time.Now().UnixNano()%100000+100000)
	start := func() *Box { return plainBox(t) }
	a := start()
	// The command runs until Close: a command's orphans die with it.
	done := make(chan error, 1)
	go func() {
		_, err := a.Exec(context.Background(), Command{Timeout: time.Minute, Args: []string{"sh", "-c", `for d in /tmp $HOME /dev/shm /work; do echo left > $d/left-by-a || exit 1; done
setsid sleep ` + marker + ` </dev/null >/dev/null 2>&1 &
nohup sleep ` + marker + `1 </dev/null >/dev/null 2>&1 &
sleep ` + marker + `2`}})
		done <- err
	}()
	var pids []string
	for i := 0; i < 500 && len(pids) < 3; i++ {
		pids = procsWith("sleep " + marker)
		time.Sleep(10 * time.Millisecond)
	}
	if len(pids) < 3 {
		t.Fatalf("setup: the box's sleepers are not running (%v)", pids)
	}
	ns, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/mnt", a.cmd.Process.Pid))
	if err != nil {
		t.Fatal(err)
	}
	// Held until the next box has started: a namespace's number is
	// reused once it is gone, and the next box's could get it.
	nsFD, err := os.Open(fmt.Sprintf("/proc/%d/ns/mnt", a.cmd.Process.Pid))
	if err != nil {
		t.Fatal(err)
	}
	image := a.disk.image
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	for _, p := range append(pids, fmt.Sprint(a.cmd.Process.Pid)) {
		if _, err := os.Stat("/proc/" + p); err == nil {
			t.Errorf("BREACH: process %s of the closed box still exists when Close returns", p)
		}
	}
	if in := procsIn(ns, "ns/mnt"); len(in) > 0 {
		t.Errorf("BREACH: processes in the closed box's mount namespace %s: %v", ns, in)
	}
	b := start()
	if other, _ := os.Readlink(fmt.Sprintf("/proc/%d/ns/mnt", b.cmd.Process.Pid)); other == ns {
		t.Errorf("BREACH: the next box runs in the closed box's mount namespace %s", ns)
	}
	<-done
	res, err := b.Exec(context.Background(), Command{Args: []string{"sh", "-c", `for d in /tmp $HOME /dev/shm /work; do cat $d/left-by-a 2>/dev/null && echo "BREACH: $d/left-by-a"; done; true`}})
	if err != nil || strings.Contains(string(res.Output), "BREACH") {
		t.Errorf("the next box sees what the closed one left: %v %s", err, res.Output)
	}
	nsFD.Close()
	releases.all.Wait()
	// Unless a live box's namespace got its number since (the next box's
	// or the pool's spare's), nothing in this harness may hold it now.
	// Only this process is searched: a namespace's number is reused as
	// soon as it is free, and another harness on the host (CI runs the
	// gate suites' boxes beside this one) may hold a box of its own under
	// it; nothing but this harness ever had a descriptor of this box's.
	live := map[string]bool{}
	for _, pid := range []int{b.cmd.Process.Pid, SpareInit()} {
		if l, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/mnt", pid)); err == nil {
			live[l] = true
		}
	}
	if held := heldHere(ns); len(held) > 0 && !live[ns] {
		t.Errorf("the closed box's mount namespace is still held after its release: %v", held)
	}
	if image == "" {
		return // rootless: the disk is a tmpfs, in no loop device
	}
	if err := waitImageFree(image, 10*time.Second); err != nil {
		t.Errorf("the closed box's disk is still attached after its release: %v", err)
	}
}

// plainBox starts a box of the default policy, closed with the test.
func plainBox(t *testing.T) *Box {
	t.Helper()
	b, err := Start(context.Background(), Options{Workspace: t.TempDir(), StateDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

// procsWith lists the host pids whose command line starts with prefix.
func procsWith(prefix string) []string {
	var out []string
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		b, err := os.ReadFile(d + "/cmdline")
		if err == nil && strings.HasPrefix(strings.ReplaceAll(string(b), "\x00", " "), prefix) {
			out = append(out, filepath.Base(d))
		}
	}
	return out
}

// procsIn lists the /proc links (under each process, matching glob)
// that name the namespace ns.
func procsIn(ns, glob string) []string {
	var out []string
	links, _ := filepath.Glob("/proc/[0-9]*/" + glob)
	tasks, _ := filepath.Glob("/proc/[0-9]*/task/[0-9]*/" + glob)
	for _, l := range append(links, tasks...) {
		if target, err := os.Readlink(l); err == nil && target == ns {
			out = append(out, l)
		}
	}
	return out
}

// heldHere lists this process's descriptors that name the namespace ns.
func heldHere(ns string) []string {
	var out []string
	links, _ := filepath.Glob("/proc/self/fd/*")
	for _, l := range links {
		if target, err := os.Readlink(l); err == nil && target == ns {
			out = append(out, l)
		}
	}
	return out
}

// TestAttackEveryInitThreadIsLockedDown: init enforces Landlock on all
// its threads in one round and leaves no_new_privs to the seccomp
// filter's TSYNC (restrict_linux.go): every thread of a built box's init
// must have both no_new_privs and the filter, or a command forked from a
// thread without them could gain privileges.
func TestAttackEveryInitThreadIsLockedDown(t *testing.T) {
	b, err := Start(context.Background(), Options{Workspace: t.TempDir(), StateDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	initThreadsLockedDown(t, b)
}

// TestAttackEveryNestedInitThreadIsLockedDown: the same on the path a
// harness that is not root takes (a user namespace per command), where
// init's CAP_SYS_ADMIN in its user namespace is what its one-round
// Landlock enforcement relies on.
func TestAttackEveryNestedInitThreadIsLockedDown(t *testing.T) {
	initThreadsLockedDown(t, nestedBox(t))
}

// initThreadsLockedDown fails t unless every thread of b's init has
// no_new_privs and a seccomp filter.
func initThreadsLockedDown(t *testing.T, b *Box) {
	t.Helper()
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/status", b.cmd.Process.Pid))
	if len(tasks) < 2 {
		t.Fatalf("init has %d threads: the test proves nothing", len(tasks))
	}
	read := 0
	for _, f := range tasks {
		st, err := os.ReadFile(f)
		if errors.Is(err, fs.ErrNotExist) {
			continue // the thread ended since the listing (a command's locked thread)
		}
		if err != nil {
			t.Fatal(err)
		}
		read++
		for _, want := range []string{"NoNewPrivs:\t1\n", "Seccomp:\t2\n"} {
			if !strings.Contains(string(st), want) {
				t.Errorf("BREACH: init's thread %s lacks %q", f, strings.TrimSpace(want))
			}
		}
	}
	if read < 2 {
		t.Fatalf("read %d of init's threads: the test proves nothing", read)
	}
}
