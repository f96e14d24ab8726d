//go:build linux

package sandbox_test

import (
	"bufio"
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/sandgate/sandgate/sandbox"
)

func start(t *testing.T, ctx context.Context, b *sandbox.Box, script string, outBytes int) *sandbox.Process {
	t.Helper()
	p, err := b.Start(ctx, sandbox.Command{Args: []string{"sh", "-c", script}, Timeout: time.Minute, OutputBytes: outBytes})
	if err != nil {
		t.Fatalf("start %q: %v", script, err)
	}
	t.Cleanup(p.Kill)
	return p
}

// TestStreamRoundTrip: a streaming command answers line by line, as the
// box's command user, and its standard error comes back in the result.
func TestStreamRoundTrip(t *testing.T) {
	b, _ := newBox(t, sandbox.Policy{})
	p := start(t, context.Background(), b, `echo started >&2; while read -r l; do echo "$(id -u) $l"; done`, 0)
	r := bufio.NewReader(p)
	for _, msg := range []string{"one", "two"} {
		if _, err := io.WriteString(p, msg+"\n"); err != nil {
			t.Fatal(err)
		}
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if want := "1000 " + msg + "\n"; line != want {
			t.Fatalf("got %q, want %q (commands run as uid 1000)", line, want)
		}
	}
	if err := p.CloseStdin(); err != nil {
		t.Fatal(err)
	}
	res, err := p.Wait()
	if err != nil || res.ExitCode != 0 || string(res.Output) != "started\n" {
		t.Fatalf("result %+v, %v", res, err)
	}
	if _, err := r.ReadString('\n'); err != io.EOF {
		t.Fatalf("read after exit: %v, want EOF", err)
	}
}

// TestStreamAttacks: what a hostile long-lived command can try. Each case
// must end with the command killed and the box still working.
func TestStreamAttacks(t *testing.T) {
	b, _ := newBox(t, sandbox.Policy{})
	cases := []struct {
		name, script string
		outBytes     int
		feed         bool // keep writing input the command does not read
		cancel       bool // the caller's context ends
		noRead       bool // the harness reads nothing
	}{
		// Output past the cap kills it: its total is bounded.
		{name: "floods output", script: `yes flood`, outBytes: 1 << 20},
		// Output the harness has not read is bounded too (StreamBuffer).
		{name: "outpaces its reader", script: `yes flood`, outBytes: 64 << 20, noRead: true},
		// Input it never reads must not pile up in init: it is killed.
		{name: "ignores input", script: `sleep 600`, feed: true},
		// The node ending (its context) kills it and what it started.
		{name: "outlives its caller", script: `sleep 600 & echo up; sleep 600`, cancel: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			p := start(t, ctx, b, c.script, c.outBytes)
			switch {
			case c.feed:
				chunk := []byte(strings.Repeat("x", 1<<20))
				for i := 0; i < 1000; i++ {
					if _, err := p.Write(chunk); err != nil {
						break
					}
				}
			case c.cancel:
				if line, err := bufio.NewReader(p).ReadString('\n'); line != "up\n" {
					t.Fatalf("command did not start: %q %v", line, err)
				}
				cancel()
			case c.noRead:
			default:
				_, _ = io.Copy(io.Discard, p)
			}
			res, err := p.Wait()
			if err != nil {
				t.Fatalf("wait: %v", err)
			}
			if res.Signal != "killed" {
				t.Fatalf("the command was not killed: %+v", res)
			}
			if _, err := io.Copy(io.Discard, p); c.noRead && err == nil {
				t.Fatal("reading after the overflow succeeded: output was lost silently")
			}
		})
	}
	if res := sh(t, b, "echo alive"); string(res.Output) != "alive\n" {
		t.Fatalf("box after the attacks: %+v", res)
	}
}

// BenchmarkStreamRoundTrip measures one line to a streaming command in the
// box and its answer back: the transport cost of an MCP call over stdio.
func BenchmarkStreamRoundTrip(b *testing.B) {
	box, err := sandbox.Start(context.Background(), sandbox.Options{Workspace: b.TempDir(), StateDir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	defer box.Close()
	p, err := box.Start(context.Background(), sandbox.Command{Args: []string{"cat"}, OutputBytes: sandbox.MaxOutputBytes})
	if err != nil {
		b.Fatal(err)
	}
	defer p.Kill()
	r := bufio.NewReader(p)
	msg := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}` + "\n")
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := p.Write(msg); err != nil {
			b.Fatal(err)
		}
		if _, err := r.ReadString('\n'); err != nil {
			b.Fatal(err)
		}
	}
}
