//go:build linux

package sandbox_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sandgate/sandgate/sandbox"
)

// Rootless boxes, attacked as an unprivileged user.
//
// Tests run as root, so each of these makes a user of its own and runs
// this test binary again as that user (SysProcAttr.Credential), which then
// finds itself unprivileged and does the work. Run as a user to begin with
// (CI's second, rootless pass, after `sandgate sandbox delegate`), the
// attacks run at once.

// rootlessUserEnv tells the copy run as a user that its user was made
// without delegation on purpose.
const rootlessUserEnv = "SANDGATE_TEST_UNDELEGATED"

// TestRootlessAttacks: as a delegated unprivileged user, a box gets every
// limit, and each attack on one fails.
func TestRootlessAttacks(t *testing.T) {
	if os.Geteuid() == 0 {
		runAsUser(t, "sgtest-rootless", true, "TestRootlessAttacks")
		return
	}
	mode := sandbox.Mode()
	if !mode.OK || !strings.HasPrefix(mode.Detail, "rootless:") {
		t.Fatalf("mode: %+v", mode)
	}
	for name, attack := range map[string]func(*testing.T){
		"memory": rootlessMemory, "pids": rootlessPids, "disk": rootlessDisk,
		"outside the workspace": rootlessOutside, "cgroup escape": rootlessCgroupEscape, "resume": rootlessResume,
		"disk fills memory": rootlessDiskFillsMemory,
	} {
		t.Run(name, attack)
	}
}

// TestRootlessRefusedWithoutDelegation: a user no cgroup subtree was
// delegated to gets no box, and the refusal names the command that fixes
// it; the box never starts with weaker limits.
func TestRootlessRefusedWithoutDelegation(t *testing.T) {
	if os.Geteuid() == 0 {
		runAsUser(t, "sgtest-nodeleg", false, "TestRootlessRefusedWithoutDelegation", rootlessUserEnv+"=1")
		return
	}
	if os.Getenv(rootlessUserEnv) == "" {
		t.Skip("this user was delegated to; the root pass runs this test as a user that was not")
	}
	b, err := sandbox.Start(context.Background(), sandbox.Options{Workspace: t.TempDir(), StateDir: t.TempDir(),
		Policy: sandbox.Policy{Limits: sandbox.Limits{MemoryBytes: 256 << 20}}})
	if err == nil {
		b.Close()
		t.Fatalf("BREACH: a box started rootless without a delegated cgroup: layers %q", b.Layers())
	}
	if !errors.Is(err, sandbox.ErrUnavailable) || !strings.Contains(err.Error(), "sandgate sandbox delegate --user sgtest-nodeleg") {
		t.Fatalf("refusal does not name the fix: %v", err)
	}
	if m := sandbox.Mode(); m.OK {
		t.Fatalf("check says rootless works without delegation: %+v", m)
	}
	t.Log(err)
}

// runAsUser runs test from a copy of this binary as user name (made if
// missing, and given its cgroup subtrees when delegate), failing t with
// the copy's output if it fails.
func runAsUser(t *testing.T, name string, delegate bool, test string, env ...string) {
	t.Helper()
	if out, err := exec.Command("useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", name).CombinedOutput(); err != nil {
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 9 { // 9: the user exists
			t.Fatalf("useradd %s: %v %s", name, err, out)
		}
	}
	u, err := user.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	if delegate {
		if _, err := sandbox.Delegate(uid, gid); err != nil {
			t.Fatal(err)
		}
	}
	dir, err := os.MkdirTemp("", "sandgate-rootless-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	bin := filepath.Join(dir, "sandbox.test")
	if err := copyExecutable(bin); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{dir, filepath.Join(dir, "home"), filepath.Join(dir, "tmp")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(d, uid, gid); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(bin, "-test.run", "^"+test+"$", "-test.v", "-test.timeout", "5m")
	cmd.Env = append([]string{"HOME=" + filepath.Join(dir, "home"), "USER=" + name, "TMPDIR=" + filepath.Join(dir, "tmp"),
		"PATH=" + os.Getenv("PATH")}, env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: []uint32{}}}
	out, err := cmd.CombinedOutput()
	t.Logf("as %s (uid %d):\n%s", name, uid, out)
	if err != nil || !strings.Contains(string(out), "--- PASS: "+test) {
		t.Fatalf("%s as %s: %v", test, name, err)
	}
}

// copyExecutable copies this test binary to dst, where another user can
// run it (go test's own directory is root's alone).
func copyExecutable(dst string) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	in, err := os.Open(self)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// rootlessBox starts a box as this (unprivileged) user over a snapshot,
// so /work is on the box's disk too.
func rootlessBox(t *testing.T, l sandbox.Limits) *sandbox.Box {
	t.Helper()
	lower := t.TempDir()
	if err := os.WriteFile(filepath.Join(lower, "f"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	b, err := sandbox.Start(context.Background(), sandbox.Options{Snapshot: lower, StateDir: t.TempDir(), Policy: sandbox.Policy{Limits: l}})
	if err != nil {
		t.Fatalf("rootless box: %v", err)
	}
	t.Cleanup(func() { b.Close() })
	layers := strings.Join(b.Layers(), "\n")
	if !strings.Contains(layers, "delegated") || !strings.Contains(layers, "rootless: a tmpfs") {
		t.Fatalf("a rootless box without its limits:\n%s", layers)
	}
	return b
}

func rootlessRun(t *testing.T, b *sandbox.Box, script string) *sandbox.Result {
	t.Helper()
	res, err := b.Exec(context.Background(), sandbox.Command{Args: []string{"sh", "-c", script}, Timeout: time.Minute})
	if err != nil {
		t.Fatalf("%q: %v", script, err)
	}
	return res
}

func alive(t *testing.T, b *sandbox.Box) {
	t.Helper()
	if res := rootlessRun(t, b, "echo alive"); res.ExitCode != 0 || !strings.Contains(string(res.Output), "alive") {
		t.Fatalf("box unusable after the attack: %+v", res)
	}
}

func rootlessMemory(t *testing.T) {
	b := rootlessBox(t, sandbox.Limits{MemoryBytes: 128 << 20, Pids: 64, DiskBytes: 64 << 20})
	res := rootlessRun(t, b, "head -c 1000000000 /dev/zero | tail > /dev/null; echo survived $?")
	if strings.Contains(string(res.Output), "survived 0") {
		t.Fatalf("BREACH: 1 GB held in memory under a 128 MiB limit: %+v", res)
	}
	t.Logf("memory: exit %d %s", res.ExitCode, lastLine(string(res.Output)))
	alive(t, b)
}

// rootlessDiskFillsMemory: a rootless box's disk is a tmpfs charged to
// the commands' memory, so filling it past the memory limit leaves no
// memory to fork the next command. The box must not hang or answer with
// a bare ENOMEM: the failure names the files holding its memory.
func rootlessDiskFillsMemory(t *testing.T) {
	b := rootlessBox(t, sandbox.Limits{MemoryBytes: 96 << 20, Pids: 64, DiskBytes: 192 << 20})
	res, err := b.Exec(context.Background(), sandbox.Command{Args: []string{"sh", "-c", "head -c 150000000 /dev/zero > /tmp/fill"}, Timeout: time.Minute})
	t.Logf("fill: %v %v", res, err)
	for i := 0; i < 2; i++ {
		res, err = b.Exec(context.Background(), sandbox.Command{Args: []string{"echo", "alive"}, Timeout: time.Minute})
		switch {
		case err == nil && res.ExitCode == 0:
			t.Logf("the box still starts commands: %+v", res)
		case errors.Is(err, sandbox.ErrMemoryHeldByFiles) && strings.Contains(err.Error(), "/tmp"):
			t.Logf("fails closed: %v", err)
		case err == nil && res.ExitCode != 0 && res.DiskFull && strings.Contains(res.DiskNote, "/tmp"):
			// The fork succeeded and the command was killed for memory:
			// the result names the files, as ErrMemoryHeldByFiles would.
			t.Logf("killed, the cause named: %+v", res)
		default:
			t.Fatalf("after /tmp filled the memory: neither a command nor a named cause: %+v %v", res, err)
		}
	}
}

func rootlessPids(t *testing.T) {
	b := rootlessBox(t, sandbox.Limits{Pids: 32, DiskBytes: 64 << 20})
	// dash gives up at the first fork that fails; 100 sleeps and the
	// shell are far over the limit.
	res := rootlessRun(t, b, "n=0; while [ $n -lt 100 ]; do sleep 60 & n=$((n+1)); done; echo started $n")
	if strings.Contains(string(res.Output), "started 100") {
		t.Fatalf("BREACH: 100 processes under a limit of 32: %+v", res)
	}
	t.Logf("pids: exit %d %s", res.ExitCode, lastLine(string(res.Output)))
	alive(t, b)
}

func rootlessDisk(t *testing.T) {
	b := rootlessBox(t, sandbox.Limits{MemoryBytes: 512 << 20, DiskBytes: 32 << 20})
	for _, dir := range []string{"/work", "/tmp", "$HOME"} {
		res := rootlessRun(t, b, "head -c 100000000 /dev/zero > "+dir+"/fill")
		if res.ExitCode == 0 || !strings.Contains(string(res.Output), "No space left on device") || !res.DiskFull {
			t.Fatalf("BREACH: 100 MB written to %s under a 32 MiB disk: %+v", dir, res)
		}
		// The other places share the one limit: all of it is taken.
		if res := rootlessRun(t, b, "head -c 2000000 /dev/zero > /tmp/more"); res.ExitCode == 0 {
			t.Fatalf("BREACH: more written beside a full %s: %s", dir, res.Output)
		}
		rootlessRun(t, b, "rm -f "+dir+"/fill /tmp/more")
	}
	alive(t, b)
}

func rootlessOutside(t *testing.T) {
	home, _ := os.UserHomeDir()
	victim := filepath.Join(home, "victim")
	if err := os.WriteFile(victim, []byte("kept"), 0o644); err != nil {
		t.Fatal(err)
	}
	b := rootlessBox(t, sandbox.Limits{DiskBytes: 64 << 20})
	// The box's own /tmp and /work are writable by design (a tmpfs of its
	// own): a host path that is spelled the same (TMPDIR=/tmp, as
	// .ci/rootless sets it) is not tried from inside, only looked for on
	// the host below, where a breach would show.
	name := fmt.Sprintf("sandgate-breach-%d", os.Getpid())
	var script strings.Builder
	for _, p := range []string{"/", "/usr", "/etc", "/opt", "/work/..", "/proc/1/root", home, filepath.Dir(home), os.TempDir()} {
		if p == "/tmp" || p == "/work" {
			continue
		}
		fmt.Fprintf(&script, "echo x 2>/dev/null > %s/%s && echo BREACH-%s; ", p, name, p)
	}
	for _, p := range []string{home, filepath.Dir(home), os.TempDir()} {
		fmt.Fprintf(&script, "echo x 2>/dev/null > %s/%s; ", p, name)
	}
	fmt.Fprintf(&script, "echo x 2>/dev/null > %s && echo BREACH-victim; ", victim)
	res := rootlessRun(t, b, script.String())
	if strings.Contains(string(res.Output), "BREACH") {
		t.Fatalf("wrote outside the workspace:\n%s", res.Output)
	}
	if got, _ := os.ReadFile(victim); string(got) != "kept" {
		t.Fatalf("BREACH: the user's own file changed: %q", got)
	}
	for _, p := range []string{home, filepath.Dir(home), os.TempDir()} {
		if _, err := os.Stat(filepath.Join(p, name)); err == nil {
			t.Fatalf("BREACH: a file appeared in %s", p)
		}
	}
}

// rootlessCgroupEscape: a command tries to leave its cgroups (there is
// no /sys in the box, and mounting cgroupfs is denied), and the user
// itself may not move a process above its delegated subtree or raise
// the limits set there.
func rootlessCgroupEscape(t *testing.T) {
	b := rootlessBox(t, sandbox.Limits{Pids: 64, DiskBytes: 64 << 20})
	res := rootlessRun(t, b, `for d in /sys/fs/cgroup/memory /sys/fs/cgroup/pids /sys/fs/cgroup; do echo $$ 2>/dev/null > $d/cgroup.procs && echo BREACH-write-$d; done
mkdir -p /tmp/cg; mount -t cgroup -o pids none /tmp/cg 2>/dev/null && echo BREACH-mount-v1
mount -t cgroup2 none /tmp/cg 2>/dev/null && echo BREACH-mount-v2
grep -E '^[0-9]+:pids:' /proc/self/cgroup`)
	out := string(res.Output)
	// The box's cgroup namespace is made before init joins its cgroups,
	// so the path shows from the hierarchy's root; it must end in the
	// commands' cgroup.
	if strings.Contains(out, "BREACH") || !strings.HasSuffix(strings.TrimSpace(out), "/cmds") {
		t.Fatalf("command left its cgroup (or is not in it):\n%s", out)
	}
	pid := []byte(strconv.Itoa(os.Getpid()))
	for _, ctrl := range []string{"memory", "pids"} {
		for _, f := range []string{
			filepath.Join("/sys/fs/cgroup", ctrl, "cgroup.procs"),
			filepath.Join("/sys/fs/cgroup", ctrl, sandbox.DelegatedDir, "cgroup.procs"),
		} {
			if err := os.WriteFile(f, pid, 0); err == nil {
				t.Fatalf("BREACH: the user moved a process to %s", f)
			}
		}
	}
	for _, f := range []string{"memory/" + sandbox.DelegatedDir + "/memory.limit_in_bytes", "pids/" + sandbox.DelegatedDir + "/pids.max"} {
		if err := os.WriteFile(filepath.Join("/sys/fs/cgroup", f), []byte("max"), 0); err == nil {
			t.Fatalf("BREACH: the user changed %s above its subtree", f)
		}
	}
}

// rootlessResume: a box that closed leaves a copy of its tmpfs disk, and
// the next box on its state (a resumed run) sees the change; a harness
// that died left no copy (its state is the marker alone: the copy is
// removed here to make that state), and a box on it is refused rather
// than shown the workspace without the change.
func rootlessResume(t *testing.T) {
	lower, state := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(lower, "f"), []byte("deleted in the box"), 0o644); err != nil {
		t.Fatal(err)
	}
	o := sandbox.Options{Snapshot: lower, StateDir: state, Policy: sandbox.Policy{Limits: sandbox.Limits{DiskBytes: 64 << 20}}}
	b, err := sandbox.Start(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	res0 := rootlessRun(t, b, "echo change > /work/changed && mkdir -p /work/d && echo x > /work/f0 && rm /work/f && chmod 000 /work/d && stat -c %a /work/d")
	if res0.ExitCode != 0 {
		t.Fatalf("first box: %s", res0.Output)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	b, err = sandbox.Start(context.Background(), o)
	if err != nil {
		t.Fatalf("a closed box's run does not resume: %v", err)
	}
	if res := rootlessRun(t, b, "cat /work/changed; ls /work; stat -c %a /work/d"); string(res.Output) != "change\nchanged\nd\nf0\n0\n" {
		t.Fatalf("the resumed box lost its change (or a deleted file came back): %q", res.Output)
	}
	b.Close()
	if err := os.RemoveAll(filepath.Join(state, "disk.saved")); err != nil {
		t.Fatal(err)
	}
	b, err = sandbox.Start(context.Background(), o)
	if err == nil {
		res := rootlessRun(t, b, "cat /work/changed")
		b.Close()
		t.Fatalf("a box started where its harness died, without its disk: %s", res.Output)
	}
	if !strings.Contains(err.Error(), "cannot be resumed") {
		t.Fatalf("refusal does not say why: %v", err)
	}
}
