//go:build linux

package sandbox_test

import (
	"context"
	"testing"
	"time"

	"github.com/sandgate/sandgate/sandbox"
)

// TestCommandOutputCap: the box keeps Limits.OutputBytes by default and a
// command's own OutputBytes (set by the harness) raises it, so a gate can
// read a long test stream whole while other commands stay capped.
func TestCommandOutputCap(t *testing.T) {
	b, _ := newBox(t, sandbox.Policy{})
	const script = "head -c 3145728 /dev/zero | tr '\\0' x"
	cases := []struct {
		name          string
		outputBytes   int
		kept, dropped int
	}{
		{"default cap", 0, 1 << 20, 2 << 20},
		{"raised by the harness", 4 << 20, 3 << 20, 0},
		{"lowered", 1000, 1000, 3<<20 - 1000},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res, err := b.Exec(context.Background(), sandbox.Command{Args: []string{"sh", "-c", script}, Timeout: time.Minute, OutputBytes: c.outputBytes})
			if err != nil || res.ExitCode != 0 {
				t.Fatalf("exec: %v %+v", err, res)
			}
			if len(res.Output) != c.kept || res.Dropped != int64(c.dropped) {
				t.Fatalf("kept %d, dropped %d; want %d, %d", len(res.Output), res.Dropped, c.kept, c.dropped)
			}
		})
	}
}
