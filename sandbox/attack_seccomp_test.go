//go:build linux

package sandbox_test

import (
	"context"
	"strings"
	"testing"

	"github.com/sandgate/sandgate/sandbox"
)

// TestAttackSeccompGaps: from inside the box, calls the seccomp filter
// denies are made another way: through the i386 ABI (int $0x80: pidfd_open,
// userfaultfd, keyctl, io_uring_setup, a clone into a new user and network
// namespace), which a filter checking only the native architecture lets
// through; and an AF_VSOCK socket, which no network namespace confines:
// natively, with the family's upper 32 bits set (the kernel drops them,
// a filter comparing all 64 did not), and through the i386 ABI's socket
// and socketcall(SYS_SOCKET) (its family in memory). A kernel without
// the i386 ABI (ia32 emulation off, or a guest whose int $0x80 faults,
// as on the Firecracker VMs this was written on) has nothing to take
// that way: TestSeccompCoversEveryABI judges the filters themselves.
func TestAttackSeccompGaps(t *testing.T) {
	b, ws := newBox(t, sandbox.Policy{})
	out := intrude(t, b, ws, "compat,vsock")
	if !strings.Contains(out, "held: an AF_VSOCK socket") || !strings.Contains(out, " ABI") {
		t.Errorf("the intruder did not finish:\n%s", out)
	}
	t.Logf("%s", out)
}

// TestAttackNoDescriptorLeaksIn: init holds descriptors a command could
// use against the box: the disk's raw mount while it builds the box (the
// overlay's work directory, every cache's upper layer), the commands'
// cgroup.procs and, on cgroup v1, the tasks files of init's own memory
// cgroup (a command that wrote itself there would leave its memory
// limit), and its control socket. A command, in a box fresh from the
// pool and in one started cold, has its stdin, stdout and stderr and
// nothing else: ls lists only those and the directory it reads.
func TestAttackNoDescriptorLeaksIn(t *testing.T) {
	for _, pooled := range []bool{false, true} {
		var b *sandbox.Box
		if pooled {
			b = pooledBox(t, sandbox.Policy{})
		} else {
			sandbox.ReleaseSpares()
			b, _ = newBox(t, sandbox.Policy{})
		}
		res, err := b.Exec(context.Background(), sandbox.Command{Args: []string{"ls", "-l", "/proc/self/fd/"}})
		if err != nil {
			t.Fatal(err)
		}
		var fds []string
		for _, l := range strings.Split(strings.TrimSpace(string(res.Output)), "\n") {
			if f := strings.Fields(l); len(f) > 9 && f[len(f)-2] == "->" {
				fds = append(fds, f[len(f)-3])
			}
		}
		if strings.Join(fds, " ") != "0 1 2 3" {
			t.Errorf("pooled=%v: BREACH: a command holds descriptors it was not given:\n%s", pooled, res.Output)
		}
	}
}
