//go:build linux

package sandbox_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sandgate/sandgate/sandbox"
)

// These attacks come from a Go test binary whose init does the work, the
// way hostile code under test would attack the box (testdata/intruder).

var intruder struct {
	once sync.Once
	path string
	err  error
}

// intruderBinary compiles the intruder once per test run.
func intruderBinary(t *testing.T) string {
	t.Helper()
	intruder.once.Do(func() {
		dir, err := os.MkdirTemp("", "sandgate-intruder-")
		if err != nil {
			intruder.err = err
			return
		}
		intruder.path = filepath.Join(dir, "intruder.test")
		cmd := exec.Command("go", "test", "-c", "-o", intruder.path, "./testdata/intruder")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			intruder.err = err
			intruder.path = string(out)
		}
	})
	if intruder.err != nil {
		t.Fatalf("build the intruder: %v\n%s", intruder.err, intruder.path)
	}
	return intruder.path
}

// intrude runs the intruder's attacks in the box and fails the test for
// every one that worked; it returns the intruder's report.
func intrude(t *testing.T, b *sandbox.Box, ws, attacks string, env ...string) string {
	t.Helper()
	bin, err := os.ReadFile(intruderBinary(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "intruder.test"), bin, 0o755); err != nil {
		t.Fatal(err)
	}
	os.Lchown(filepath.Join(ws, "intruder.test"), sandbox.HostCommandID, sandbox.HostCommandID)
	script := strings.Join(append(env, "SANDGATE_ATTACK="+attacks, "./intruder.test"), " ")
	res, err := b.Exec(context.Background(), sandbox.Command{Args: []string{"sh", "-c", script}, Timeout: time.Minute})
	if err != nil {
		t.Fatalf("intruder: %v", err)
	}
	out := string(res.Output)
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "BREACH") {
			t.Error(l)
		}
	}
	if !strings.Contains(out, "held:") {
		t.Fatalf("the intruder did not run (exit %d):\n%s", res.ExitCode, out)
	}
	return out
}

// TestAttackForgedReplies: while a command that exits 7 runs, the intruder
// hunts for the control socket (inherited fds, /proc/*/fd, pidfd_getfd on
// every pid) and writes passing replies for every request id. The harness
// must still see exit 7.
func TestAttackForgedReplies(t *testing.T) {
	b, ws := newBox(t, sandbox.Policy{})
	victim := make(chan *sandbox.Result, 1)
	go func() {
		res, err := b.Exec(context.Background(), sandbox.Command{Args: []string{"sh", "-c", "touch /work/victim-up; sleep 2; exit 7"}, Timeout: time.Minute})
		if err != nil {
			t.Errorf("victim: %v", err)
		}
		victim <- res
	}()
	waitFor(t, filepath.Join(ws, "victim-up"))
	out := intrude(t, b, ws, "channel")
	if !strings.Contains(out, "held: no control channel reachable") {
		t.Errorf("the intruder did not finish its search:\n%s", out)
	}
	if res := <-victim; res != nil && res.ExitCode != 7 {
		t.Errorf("BREACH: the harness saw exit %d for a command that exited 7", res.ExitCode)
	}
}

// TestAttackInitOutOfReach: init is invisible, untraceable and cannot be
// signalled; the box keeps working afterwards.
func TestAttackInitOutOfReach(t *testing.T) {
	b, ws := newBox(t, sandbox.Policy{})
	intrude(t, b, ws, "init")
	if res := sh(t, b, "echo alive"); !strings.Contains(string(res.Output), "alive") {
		t.Fatalf("box unusable after the attack: %+v", res)
	}
	start := time.Now()
	b.Close()
	if d := time.Since(start); d > 5*time.Second {
		t.Logf("closing the box took %s", d)
	}
}

// TestAttackParallelCommandsAreStrangers: a command cannot see, trace or
// kill another node's command running beside it.
func TestAttackParallelCommandsAreStrangers(t *testing.T) {
	b, ws := newBox(t, sandbox.Policy{})
	// Command threads are reused: go through more commands than one thread
	// serves, so the victim and the intruder run on threads that have
	// served others before.
	for i := 0; i < 25; i++ {
		if res := sh(t, b, "true"); res.ExitCode != 0 {
			t.Fatalf("command %d on a reused thread: %s", i, res.Output)
		}
	}
	victim := make(chan *sandbox.Result, 1)
	go func() {
		res, err := b.Exec(context.Background(), sandbox.Command{Args: []string{"sh", "-c", "touch /work/victim-up; sleep 3.777; echo survived"}, Timeout: time.Minute})
		if err != nil {
			t.Errorf("victim: %v", err)
		}
		victim <- res
	}()
	waitFor(t, filepath.Join(ws, "victim-up"))
	intrude(t, b, ws, "siblings", "SANDGATE_VICTIM=3.777")
	if res := <-victim; res == nil || res.ExitCode != 0 || !strings.Contains(string(res.Output), "survived") {
		t.Errorf("BREACH: the other command was disturbed: %+v", res)
	}
}

// TestAttackPrivilegeAndHostSecrets: commands run as uid 1000 with no
// capabilities, the host's /etc secrets are not in the box, and a
// root-only file in a directory shown read-only stays unreadable.
func TestAttackPrivilegeAndHostSecrets(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "secret"), []byte("canary-51c7"), 0o600); err != nil {
		t.Fatal(err)
	}
	os.Chmod(dir, 0o755)
	b, ws := newBox(t, sandbox.Policy{ReadOnly: []string{dir}})
	intrude(t, b, ws, "secrets")
	if os.Geteuid() == 0 {
		mustFail(t, b, "read a root-only host file", "cat "+filepath.Join(dir, "secret"))
	}
	res := sh(t, b, "id -u; id -g; id -G")
	if got := strings.Fields(string(res.Output)); strings.Join(got, " ") != "1000 1000 1000" {
		t.Errorf("commands run as %q, want uid, gid and groups 1000", got)
	}
	for _, f := range []string{"/etc/shadow", "/etc/gshadow", "/etc/sudoers", "/etc/machine-id", "/etc/ssh"} {
		mustFail(t, b, "see "+f, "test -e "+f)
	}
}

func waitFor(t *testing.T, path string) {
	t.Helper()
	for i := 0; i < 500; i++ {
		if _, err := os.Stat(path); err == nil {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("%s never appeared", path)
}

// TestAttackLeftoversOnReusedThread: a command thread serves the next
// command in a domain nested under this one's, so anything of a command
// still alive when its Exec returns could trace or signal the commands
// after it. A command leaves behind every kind of straggler it can (a
// detached loop ignoring signals, one that stopped itself, one blocked on
// a FIFO, one holding the output pipe); none may run once Exec returns.
func TestAttackLeftoversOnReusedThread(t *testing.T) {
	b, ws := newBox(t, sandbox.Policy{})
	script := `mkfifo /tmp/fifo
(trap '' TERM HUP INT; while :; do echo beat >>/work/hb-loop; sleep 0.05; done) </dev/null >/dev/null 2>&1 &
setsid sh -c 'trap "" TERM HUP; while :; do echo beat >>/work/hb-setsid; sleep 0.05; done' </dev/null >/dev/null 2>&1 &
sh -c 'echo beat >>/work/hb-fifo; cat /tmp/fifo; echo beat >>/work/hb-fifo' </dev/null >/dev/null 2>&1 &
sh -c 'kill -STOP $$; echo beat >>/work/hb-stop' </dev/null >/dev/null 2>&1 &
sh -c 'while :; do echo beat >>/work/hb-pipe; sleep 0.05; done' &
sleep 0.3; echo started`
	res := sh(t, b, script)
	if !strings.Contains(string(res.Output), "started") {
		t.Fatalf("the stragglers did not start: %+v", res)
	}
	size := func() map[string]int64 {
		m := map[string]int64{}
		for _, f := range []string{"hb-loop", "hb-setsid", "hb-fifo", "hb-stop", "hb-pipe"} {
			if st, err := os.Stat(filepath.Join(ws, f)); err == nil {
				m[f] = st.Size()
			}
		}
		return m
	}
	before := size()
	for _, f := range []string{"hb-loop", "hb-setsid", "hb-fifo", "hb-pipe"} {
		if before[f] == 0 {
			t.Fatalf("straggler %s never ran: %v", f, before)
		}
	}
	// The next commands run on the thread the stragglers' command used; one
	// of them wakes the FIFO reader and the stopped one, were they alive.
	for i := 0; i < 5; i++ {
		sh(t, b, "echo x >/tmp/fifo & sleep 0.1; pkill -CONT -f 'kill -STOP' 2>/dev/null; true")
	}
	after := size()
	for f, n := range after {
		if n != before[f] {
			t.Errorf("BREACH: %s kept running after its command's Exec returned (%d -> %d bytes)", f, before[f], n)
		}
	}
}

// TestAttackKernelKnobsReadOnly: no file under /proc/sys, nor
// /proc/sysrq-trigger, is writable from a command (access(2) reports
// read-only mounts as well as permissions).
func TestAttackKernelKnobsReadOnly(t *testing.T) {
	b, _ := newBox(t, sandbox.Policy{})
	res := sh(t, b, "find /proc/sys /proc/sysrq-trigger -writable 2>/dev/null | head; echo done")
	if out := strings.TrimSpace(string(res.Output)); out != "done" {
		t.Errorf("BREACH: writable kernel knobs:\n%s", out)
	}
}
