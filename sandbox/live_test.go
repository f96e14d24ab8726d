//go:build linux

package sandbox_test

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sandgate/sandgate/sandbox"
)

// liveBuf is a Command.Live that tests read while the command runs.
type liveBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *liveBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *liveBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestLiveOutputWhileRunning: a command's first line reaches Command.Live
// while the command still runs (it waits for a kill that comes only once
// the line has been seen), and a command killed by its context keeps, in
// Live and in its Result, everything it wrote. Without the periodic send
// the line would arrive with the final reply, after the kill this test
// only sends once it has seen the line: the test would wait forever.
func TestLiveOutputWhileRunning(t *testing.T) {
	b, _ := newBox(t, sandbox.Policy{})
	live := &liveBuf{}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type out struct {
		res *sandbox.Result
		err error
	}
	done := make(chan out, 1)
	go func() {
		res, err := b.Exec(ctx, sandbox.Command{Args: []string{"sh", "-c", "echo first line; printf 'no newline yet'; sleep 600"}, Timeout: 20 * time.Minute, Live: live})
		done <- out{res, err}
	}()
	for !strings.Contains(live.String(), "no newline yet") {
		select {
		case o := <-done:
			t.Fatalf("the command ended before its output arrived: %+v %v", o.res, o.err)
		case <-time.After(20 * time.Millisecond):
		}
	}
	if got := live.String(); got != "first line\nno newline yet" {
		t.Fatalf("live output while running: %q", got)
	}
	cancel()
	o := <-done
	if o.res == nil || string(o.res.Output) != "first line\nno newline yet" {
		t.Fatalf("the killed command's result: %+v %v", o.res, o.err)
	}
	if got := live.String(); got != "first line\nno newline yet" {
		t.Fatalf("live output after the kill: %q", got)
	}
}

// TestLiveOutputWhole: a command with more output than a chunk gives Live
// all of it, in order, by the time Exec returns, as its Result has it.
func TestLiveOutputWhole(t *testing.T) {
	b, _ := newBox(t, sandbox.Policy{})
	live := &liveBuf{}
	res, err := b.Exec(context.Background(), sandbox.Command{Args: []string{"sh", "-c", "seq 1 400000"}, Timeout: time.Minute, OutputBytes: 8 << 20, Live: live})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("exec: %v %+v", err, res)
	}
	if live.String() != string(res.Output) || !strings.HasSuffix(live.String(), "\n400000\n") {
		t.Fatalf("live has %d bytes, the result %d; ends %q", len(live.String()), len(res.Output), live.String()[max(0, len(live.String())-20):])
	}
}
