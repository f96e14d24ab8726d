package workspace_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sandgate/sandgate/nodes/internal/nodetest"
	"github.com/sandgate/sandgate/runtime"
)

// TestDiskLimitFeedback fills the box's disk from a shell node: the node
// fails with feedback naming the limit, and the finished run leaves no
// disk image behind.
func TestDiskLimitFeedback(t *testing.T) {
	h := nodetest.NewHarness(t, nodetest.SeedRepo(t))
	sum := h.Run(t, `version: 1
name: fill
sandbox: {disk: 64MiB}
start: fill
nodes:
  fill: {type: shell, run: "head -c 200M /dev/zero > big", on_pass: done, on_fail: no}
  done: {type: succeed}
  no: {type: fail}
`, nil)
	if sum.Status != runtime.StatusFailed {
		t.Fatalf("BREACH: writing 200 MiB under a 64 MiB disk limit passed: %s", sum.Status)
	}
	node, fb := sum.LastFeedback()
	if node != "fill" || !strings.Contains(fb, "No space left on device") || !strings.Contains(fb, "the box's disk limit of 64 MiB was reached") {
		t.Fatalf("feedback of %s does not name the disk limit:\n%s", node, fb)
	}
	if _, err := os.Stat(filepath.Join(sum.Dir, "box", "disk.img")); !os.IsNotExist(err) {
		t.Fatalf("the finished run kept its disk image: %v", err)
	}
}
