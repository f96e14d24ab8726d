package workspace_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sandgate/sandgate/nodes/internal/nodetest"
	"github.com/sandgate/sandgate/runtime"
)

// TestProxyReleasedAtClose: a run with an egress proxy leaves neither its
// log files open in the harness nor its socket directory behind once the
// run is over (a long-lived harness would otherwise run out of both).
func TestProxyReleasedAtClose(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	h := nodetest.NewHarness(t, nodetest.SeedRepo(t))
	src := "version: 1\nname: proxy\nsandbox: {network: allowlist, allow_hosts: [example.com]}\nstart: s\nnodes:\n  s: {type: shell, run: \"true\", next: done}\n  done: {type: succeed}\n"
	if sum := h.Run(t, src, nil); sum.Status != runtime.StatusSucceeded {
		t.Fatalf("status %s (%s)", sum.Status, sum.Reason)
	}
	fds, _ := os.ReadDir("/proc/self/fd")
	for _, fd := range fds {
		target, _ := os.Readlink(filepath.Join("/proc/self/fd", fd.Name()))
		if strings.HasSuffix(target, "/audit.log") || strings.HasSuffix(target, "/alerts.jsonl") {
			t.Errorf("still open after the run: %s", target)
		}
	}
	if left, _ := filepath.Glob(filepath.Join(tmp, "sg-*")); len(left) > 0 {
		t.Errorf("proxy socket directories left behind: %v", left)
	}
}
