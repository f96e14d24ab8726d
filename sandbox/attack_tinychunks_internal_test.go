//go:build linux

package sandbox

import (
	"bufio"
	"errors"
	"io"
	"runtime"
	"strings"
	"testing"
)

// blockedWriter is a Command.Live that takes nothing until released: the
// live queue holds everything pushed to it meanwhile.
type blockedWriter struct{ release chan struct{} }

func (w blockedWriter) Write(p []byte) (int, error) {
	<-w.release
	return len(p), nil
}

// TestAttackReplyTinyChunks: a compromised init that sends a command's
// output one byte per chunk (an honest one does so at most every
// LiveEvery) must not make the harness hold many times the cap: each
// chunk is its own allocation, and the sink's and the live queue's lists
// of them grow by a slice header a byte. What the harness holds for the
// output (after a collection, while the chunks are still the request's)
// stays within twice the cap and a bounded slack, with Live blocked and
// without it.
func TestAttackReplyTinyChunks(t *testing.T) {
	const capBytes = 256 << 10
	var wire strings.Builder
	line := chunkLine(1)
	for range capBytes {
		wire.WriteString(line)
		wire.WriteByte('x')
	}
	for _, withLive := range []bool{false, true} {
		var live *liveQueue
		release := make(chan struct{})
		if withLive {
			live = newLiveQueue(blockedWriter{release})
		}
		out := &streamed{max: capBytes, live: live}
		b := &Box{pending: map[int]pendingCall{1: {ch: make(chan response, 1), nonce: "n", out: out}}}
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		err := b.readReplies(bufio.NewReaderSize(strings.NewReader(wire.String()), replyBuffer))
		runtime.GC()
		runtime.ReadMemStats(&after)
		if !errors.Is(err, io.EOF) || out.held != capBytes {
			t.Fatalf("live=%v: readReplies: %v, held %d", withLive, err, out.held)
		}
		grown := int64(after.HeapAlloc) - int64(before.HeapAlloc)
		t.Logf("live=%v: %d one-byte chunks: the harness holds %d bytes more (cap %d)", withLive, capBytes, grown, capBytes)
		if grown > 2*capBytes+1<<20 {
			t.Errorf("BREACH: live=%v: %d bytes of output in one-byte chunks hold %d bytes of the harness's memory, past twice the cap and 1 MiB", withLive, capBytes, grown)
		}
		runtime.KeepAlive(out)
		close(release)
		live.close()
	}
}
