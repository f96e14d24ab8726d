//go:build linux

package sandbox_test

import (
	"strings"
	"testing"

	"github.com/sandgate/sandgate/sandbox"
)

// TestAttackSeccompGaps: from inside the box, calls the seccomp filter
// denies are made another way: through the i386 ABI (int $0x80: pidfd_open,
// userfaultfd, keyctl, io_uring_setup, a clone into a new user and network
// namespace), which a filter checking only the native architecture lets
// through; and an AF_VSOCK socket, which no network namespace confines. A
// kernel without the i386 ABI (ia32 emulation off) has nothing to take
// that way: TestSeccompCoversEveryABI judges the filters themselves.
func TestAttackSeccompGaps(t *testing.T) {
	b, ws := newBox(t, sandbox.Policy{})
	out := intrude(t, b, ws, "compat,vsock")
	if !strings.Contains(out, "held: an AF_VSOCK socket") || !strings.Contains(out, " ABI") {
		t.Errorf("the intruder did not finish:\n%s", out)
	}
	t.Logf("%s", out)
}
