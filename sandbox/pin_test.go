//go:build linux

package sandbox_test

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/sandgate/sandgate/sandbox"
)

// Init moves its threads to one CPU while it enters its Landlock domain
// (pin_linux.go): its commands must still get every CPU the harness has,
// in a box whose init was started ahead and in one started at once; and
// so must every thread of init, those made after the round too.
func TestBoxCommandsKeepTheirCPUs(t *testing.T) {
	want := cpusAllowed(t, string(must(os.ReadFile("/proc/thread-self/status"))))
	for i := 0; i < 2; i++ {
		b, _ := newBox(t, sandbox.Policy{})
		res := sh(t, b, "cat /proc/self/status; nproc")
		if got := cpusAllowed(t, string(res.Output)); got != want {
			t.Errorf("box %d: a command may run on CPUs %s, the harness on %s", i, got, want)
		}
		initKeepsCPUs(t, b, fmt.Sprintf("box %d (pooled %v)", i, sandbox.Pooled(b)), want)
	}
}

func cpusAllowed(t *testing.T, status string) string {
	t.Helper()
	for _, l := range strings.Split(status, "\n") {
		if v, ok := strings.CutPrefix(l, "Cpus_allowed_list:"); ok {
			return strings.TrimSpace(v)
		}
	}
	t.Fatalf("no Cpus_allowed_list in:\n%s", status)
	return ""
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
