//go:build linux

package sandbox_test

import (
	"bytes"
	"context"
	"fmt"
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

// TestCommandOutputFarPastCap: a command printing many times its cap runs
// to its end (it is not killed: its exit status is its own), and the
// result holds exactly the first cap bytes it printed, in order across
// the chunks init sends them in, and counts the rest as dropped; with
// Command.Live too, whose periodic sends cut the output elsewhere.
func TestCommandOutputFarPastCap(t *testing.T) {
	b, _ := newBox(t, sandbox.Policy{})
	const lines, capBytes = 4000000, 5<<20 + 12345 // about 31 MB printed
	var want bytes.Buffer
	for i := 1; i <= lines; i++ {
		fmt.Fprintln(&want, i)
	}
	for _, live := range []bool{false, true} {
		t.Run(fmt.Sprint("live=", live), func(t *testing.T) {
			c := sandbox.Command{Args: []string{"sh", "-c", fmt.Sprintf("seq %d; exit 7", lines)}, Timeout: time.Minute, OutputBytes: capBytes}
			if live {
				c.Live = &liveBuf{}
			}
			res, err := b.Exec(context.Background(), c)
			if err != nil || res.ExitCode != 7 || res.Signal != "" {
				t.Fatalf("exec: %v %+v", err, res)
			}
			if !bytes.Equal(res.Output, want.Bytes()[:capBytes]) {
				t.Fatalf("kept %d bytes that are not the first %d the command printed", len(res.Output), capBytes)
			}
			if res.Dropped != int64(want.Len()-capBytes) {
				t.Fatalf("dropped %d, want %d", res.Dropped, want.Len()-capBytes)
			}
		})
	}
}
