//go:build linux

package sandbox_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sandgate/sandgate/sandbox"
)

// Every test here tries to break out of the box and fails if it succeeds.
// A blocked probe may fail in any way (non-zero exit); exit 0 is a breach.

func mustFail(t *testing.T, b *sandbox.Box, what, script string) {
	t.Helper()
	res := sh(t, b, script)
	if res.ExitCode == 0 {
		t.Errorf("BREACH: %s succeeded:\n$ %s\n%s", what, script, res.Output)
	}
}

func TestAttackWriteOutsideWorkspace(t *testing.T) {
	b, _ := newBox(t, sandbox.Policy{})
	hostDir := t.TempDir() // a harness directory the box must not reach
	for what, script := range map[string]string{
		"write /etc":             "echo x > /etc/pwned",
		"write /usr":             "echo x > /usr/bin/pwned",
		"write the new root":     "echo x > /pwned",
		"escape with ../":        "cd /work && echo x > ../../pwned",
		"planted symlink out":    "ln -sf /etc/passwd /work/link && echo x >> /work/link",
		"symlink to a host path": fmt.Sprintf("ln -sf %s /work/hostlink && echo x > /work/hostlink/pwned", hostDir),
		"remount root rw":        "mount -o remount,rw /",
		"write /proc sysctl":     "echo 1 > /proc/sys/kernel/sysrq",
	} {
		mustFail(t, b, what, script)
	}
	// The box has its own /tmp, so this may "succeed" inside; what matters
	// is that nothing reaches the host directory.
	sh(t, b, fmt.Sprintf("mkdir -p %s; echo x > %s/pwned; true", hostDir, hostDir))
	if entries, _ := os.ReadDir(hostDir); len(entries) != 0 {
		t.Errorf("BREACH: the box wrote into a host directory: %v", entries)
	}
}

func TestAttackReadHarnessSecrets(t *testing.T) {
	t.Setenv("SANDGATE_CANARY_TOKEN", "canary-7f3a9c")
	t.Setenv("OPENAI_API_KEY", "sk-canary-7f3a9c")
	secret := filepath.Join(t.TempDir(), "id_ed25519")
	os.WriteFile(secret, []byte("canary-7f3a9c"), 0o600)
	b, _ := newBox(t, sandbox.Policy{Env: []string{"PATH"}})
	res := sh(t, b, fmt.Sprintf("env; cat /proc/*/environ 2>/dev/null | tr '\\0' '\\n'; cat %s /root/.ssh/* ~/.ssh/* 2>/dev/null; ls /root /home 2>&1; true", secret))
	if strings.Contains(string(res.Output), "canary-7f3a9c") {
		t.Errorf("BREACH: a harness secret is visible in the box:\n%s", res.Output)
	}
	// The harness runs with -test.* flags; its process must be invisible.
	mustFail(t, b, "see the harness's processes", "cat /proc/[0-9]*/cmdline | tr '\\0' ' ' | grep -q -- '-test\\.'")
	mustFail(t, b, "signal the harness", fmt.Sprintf("kill -0 %d", os.Getpid()))
}

func TestAttackNetwork(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Write([]byte("HTTP/1.0 200 OK\r\n\r\nhost-secret\n"))
			c.Close()
		}
	}()
	udp, _ := net.ListenPacket("udp", "127.0.0.1:0")
	defer udp.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	b, _ := newBox(t, sandbox.Policy{})
	for what, script := range map[string]string{
		"curl the host's loopback":   fmt.Sprintf("curl -s -m 3 http://127.0.0.1:%d/", port),
		"wget the host's loopback":   fmt.Sprintf("wget -q -T 3 -O- http://127.0.0.1:%d/", port),
		"bash /dev/tcp to the host":  fmt.Sprintf("bash -c 'exec 3<>/dev/tcp/127.0.0.1/%d && cat <&3 | grep -q host-secret'", port),
		"udp to the host's loopback": fmt.Sprintf("bash -c 'echo hi > /dev/udp/127.0.0.1/%d' && test -n \"$(cat /proc/net/udp | tail -n +2)\"", udp.LocalAddr().(*net.UDPAddr).Port),
		"dns lookup":                 "getent hosts proxy.golang.org",
		"an interface besides lo":    "test $(tail -n +3 /proc/net/dev | grep -vc '^ *lo:') -gt 0",
		"a route out":                "test $(tail -n +2 /proc/net/route | wc -l) -gt 0",
		"create a network namespace": "unshare -n true",
		"create a user namespace":    "unshare -Ur true",
	} {
		mustFail(t, b, what, script)
	}
	// Loopback inside the box works for builds and tests.
	if res := sh(t, b, "python3 -c 'import socket; s=socket.socket(); s.bind((\"127.0.0.1\",0)); s.listen(); c=socket.create_connection(s.getsockname()); print(\"ok\")'"); res.ExitCode != 0 || !strings.Contains(string(res.Output), "ok") {
		t.Errorf("loopback inside the box does not work: %s", res.Output)
	}
}

func TestAttackKernelInterfaces(t *testing.T) {
	b, _ := newBox(t, sandbox.Policy{})
	for what, script := range map[string]string{
		"mount a filesystem": "mkdir -p /tmp/m && mount -t tmpfs none /tmp/m",
		"ptrace":             "sleep 5 & exec 3>&- ; strace -p $! 2>/dev/null || python3 -c 'import ctypes,sys; sys.exit(0 if ctypes.CDLL(None).ptrace(16, 1, 0, 0) == 0 else 1)'",
		"gain privileges":    "grep -q 'NoNewPrivs:[[:space:]]*0' /proc/self/status",
		"seccomp missing":    "grep -q 'Seccomp:[[:space:]]*0' /proc/self/status",
	} {
		mustFail(t, b, what, script)
	}
}

// hostProcsWith lists host processes whose command line contains marker.
// uniq keeps this process's sleepers apart from another test run's on
// the same host.
var uniq = fmt.Sprintf("1%05d", os.Getpid()%100000)

// u makes a script's or marker's "sleep 9876…" unique to this process.
func u(s string) string { return strings.ReplaceAll(s, "sleep 9876", "sleep "+uniq+"9876") }

func hostProcsWith(marker string) []string {
	marker = u(marker)
	var out []string
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		cmd := strings.ReplaceAll(string(b), "\x00", " ")
		if err == nil && strings.HasPrefix(cmd, marker) {
			out = append(out, e.Name()+": "+cmd)
		}
	}
	return out
}

func TestAttackOrphansDieWithTheirCommand(t *testing.T) {
	b, _ := newBox(t, sandbox.Policy{})
	sh(t, b, u("setsid sleep 987651 & (sleep 987652 &) ; nohup sleep 987653 >/dev/null 2>&1 & exit 0"))
	time.Sleep(200 * time.Millisecond)
	for _, m := range []string{"987651", "987652", "987653"} {
		if p := hostProcsWith("sleep " + m); len(p) > 0 {
			t.Errorf("BREACH: a process outlived its command: %v", p)
		}
	}
}

func TestAttackKillSwitchKillsEverything(t *testing.T) {
	b, _ := newBox(t, sandbox.Policy{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		b.Exec(context.Background(), sandbox.Command{Args: []string{"sh", "-c", u("setsid sleep 987661 & nohup sleep 987662 & sleep 987663")}, Timeout: time.Minute})
	}()
	deadline := time.Now().Add(10 * time.Second)
	for len(hostProcsWith("sleep 98766")) < 3 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if n := len(hostProcsWith("sleep 98766")); n < 3 {
		t.Fatalf("setup: only %d sleepers started", n)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	<-done
	time.Sleep(100 * time.Millisecond)
	if p := hostProcsWith("sleep 98766"); len(p) > 0 {
		t.Errorf("BREACH: processes survived the kill switch: %v", p)
	}
	if _, err := b.Exec(context.Background(), sandbox.Command{Args: []string{"true"}}); err == nil {
		t.Error("a closed box still runs commands")
	}
}

func TestAttackTimeoutKillsTheCommand(t *testing.T) {
	b, _ := newBox(t, sandbox.Policy{})
	start := time.Now()
	res, err := b.Exec(context.Background(), sandbox.Command{Args: []string{"sh", "-c", u("setsid sleep 987671 & sleep 987672")}, Timeout: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if !res.TimedOut || res.ExitCode == 0 || time.Since(start) > 10*time.Second {
		t.Fatalf("timeout not enforced: %+v after %s", res, time.Since(start))
	}
	time.Sleep(100 * time.Millisecond)
	if p := hostProcsWith("sleep 98767"); len(p) > 0 {
		t.Errorf("BREACH: a timed-out command kept running: %v", p)
	}
}

func TestAttackResourceExhaustion(t *testing.T) {
	ws := t.TempDir()
	b, err := sandbox.Start(context.Background(), sandbox.Options{Workspace: ws, StateDir: t.TempDir(),
		Policy: sandbox.Policy{Limits: sandbox.Limits{MemoryBytes: 256 << 20, Pids: 64}}})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	res, err := b.Exec(context.Background(), sandbox.Command{Args: []string{"sh", "-c", "head -c 2000000000 /dev/zero | tail > /dev/null"}, Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode == 0 {
		t.Errorf("BREACH: 2 GB held in memory under a 256 MiB limit")
	}
	res, err = b.Exec(context.Background(), sandbox.Command{Args: []string{"bash", "-c", "bomb() { bomb | bomb & }; bomb; sleep 2; ls /proc | grep -cx '[0-9]*'"}, Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.TrimSpace(string(res.Output)); len(n) > 0 && n[len(n)-1] >= '0' {
		t.Logf("fork bomb: exit %d, last line %q", res.ExitCode, lastLine(string(res.Output)))
	}
	// The box survives and still works once the bomb is gone.
	if res := sh(t, b, "echo alive"); res.ExitCode != 0 || !strings.Contains(string(res.Output), "alive") {
		t.Fatalf("box unusable after the fork bomb: %+v", res)
	}
}

// TestAttackMemoryKillsInit: a command fills the box's memory with tmpfs
// pages (/tmp), which belong to no process, so the OOM killer's largest
// process in the box is init: the box dies and every other node's command
// with it. Init must survive and keep answering.
// /tmp now lives on the box's disk; /dev/shm is still memory.
func TestAttackMemoryKillsInit(t *testing.T) {
	for _, c := range []struct {
		dir   string
		limit int64
	}{{"/tmp", 256 << 20}, {"/dev/shm", 48 << 20}} {
		t.Run(c.dir, func(t *testing.T) {
			b, err := sandbox.Start(context.Background(), sandbox.Options{Workspace: t.TempDir(), StateDir: t.TempDir(),
				Policy: sandbox.Policy{Limits: sandbox.Limits{MemoryBytes: c.limit, Pids: 64}}})
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			res, err := b.Exec(context.Background(), sandbox.Command{Args: []string{"sh", "-c", "head -c 300000000 /dev/zero > " + c.dir + "/fill; sleep 1"}, Timeout: time.Minute})
			if err != nil {
				t.Fatalf("BREACH: filling %s under a %d MiB limit killed the box: %v", c.dir, c.limit>>20, err)
			}
			t.Logf("fill %s: exit %d %s", c.dir, res.ExitCode, res.Signal)
			// The file still fills the commands' share, so this command may be
			// OOM-killed too; what matters is that init answers.
			_, err = b.Exec(context.Background(), sandbox.Command{Args: []string{"rm", "-f", c.dir + "/fill"}})
			// Rootless, /tmp is on a tmpfs charged to the commands' memory:
			// the full box cannot fork rm, and must say so by name.
			if err != nil && (os.Geteuid() == 0 || !errors.Is(err, sandbox.ErrMemoryHeldByFiles)) {
				t.Fatalf("BREACH: the box died after %s was filled: %v", c.dir, err)
			}
			t.Logf("rm after the fill: %v", err)
		})
	}
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}

func TestFailClosed(t *testing.T) {
	ws := t.TempDir()
	for what, o := range map[string]sandbox.Options{
		"isolation none without consent":  {Workspace: ws, StateDir: t.TempDir(), Policy: sandbox.Policy{Isolation: "none"}},
		"allowlist without a proxy":       {Workspace: ws, StateDir: t.TempDir(), Policy: sandbox.Policy{Network: sandbox.NetworkAllowlist, AllowHosts: []string{"proxy.golang.org"}}},
		"a workspace that does not exist": {Workspace: filepath.Join(ws, "missing"), StateDir: t.TempDir()},
	} {
		b, err := sandbox.Start(context.Background(), o)
		if err == nil {
			b.Close()
			t.Errorf("%s: the box started; it must refuse", what)
		} else {
			t.Logf("%s: %v", what, err)
		}
	}
}

// TestAttackWriteReadOnlySubmount: a directory shown read-only is
// read-only all the way down, mounts below it included, even where the
// files' permissions would let the commands write.
func TestAttackWriteReadOnlySubmount(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting the host submount needs root")
	}
	// Not under /tmp: the box's own /tmp would hide it.
	dir, err := os.MkdirTemp("/var/tmp", "sandgate-ro-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	sub := filepath.Join(dir, "sub")
	os.Mkdir(sub, 0o755)
	if err := syscall.Mount("tmpfs", sub, "tmpfs", 0, "mode=1777,size=1m"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Unmount(sub, syscall.MNT_DETACH) })
	for _, f := range []string{filepath.Join(dir, "open"), filepath.Join(sub, "open")} {
		os.WriteFile(f, []byte("shown\n"), 0o666)
		os.Chmod(f, 0o666)
	}
	os.Chmod(dir, 0o777)
	b, _ := newBox(t, sandbox.Policy{ReadOnly: []string{dir}})
	if res := sh(t, b, "cat "+sub+"/open"); string(res.Output) != "shown\n" {
		t.Fatalf("the submount is not shown in the box: %q", res.Output)
	}
	// Landlock stops these writes as well; the mounts themselves must be
	// read-only too (the layer under it), the submount included.
	res := sh(t, b, "cat /proc/self/mountinfo")
	var shown int
	for _, l := range strings.Split(string(res.Output), "\n") {
		if f := strings.Fields(l); len(f) > 5 && (f[4] == dir || strings.HasPrefix(f[4], dir+"/")) {
			shown++
			if !strings.HasPrefix(f[5], "ro,") && f[5] != "ro" {
				t.Errorf("BREACH: %s is mounted %s in the box", f[4], f[5])
			}
		}
	}
	if shown != 2 {
		t.Errorf("want the directory and its submount in the box's mount table, found %d:\n%s", shown, res.Output)
	}
	for what, script := range map[string]string{
		"append to a world-writable file":       "echo x >> " + dir + "/open",
		"create in a world-writable directory":  "touch " + dir + "/pwned",
		"append to a file on the submount":      "echo x >> " + sub + "/open",
		"create on the world-writable submount": "touch " + sub + "/pwned",
	} {
		mustFail(t, b, what, script)
	}
}
