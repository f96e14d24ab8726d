//go:build linux

package sandbox

import (
	"context"
	"os"
	"sync"
	"time"
)

// Init's side of streaming commands (Box.Start): a long-lived command, such
// as an MCP server, whose standard input arrives in input requests and
// whose standard output goes to the harness as it is written. It runs with
// the confinement of every other command (newCommand, runOnThread); what
// differs is only how its bytes travel, and each direction is bounded:
//
//   - input: init queues at most streamQueue pieces per command; a command
//     that leaves its input unread until the queue is full is killed, so
//     it can neither stall init's request loop nor grow init's memory.
//   - output: the total is capped by OutputBytes; a command that writes
//     more is killed (a protocol stream cut short is worth nothing), and
//     init holds at most one write's bytes before sending them on.
//   - standard error is kept up to streamStderr bytes for the result.

// streamQueue bounds the input pieces init holds for one command.
const streamQueue = 64

// streamStderr caps the standard error a streaming command's result keeps.
const streamStderr = 64 << 10

// streamTable maps running streaming commands to their input queues.
type streamTable struct {
	mu sync.Mutex
	m  map[int]chan []byte
}

var streams = &streamTable{m: map[int]chan []byte{}}

// open makes the input queue of request id, before its command starts
// (input may follow the request at once).
func (t *streamTable) open(id int) chan []byte {
	q := make(chan []byte, streamQueue)
	t.mu.Lock()
	t.m[id] = q
	t.mu.Unlock()
	return q
}

func (t *streamTable) close(id int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if q, ok := t.m[id]; ok {
		delete(t.m, id)
		close(q)
	}
}

// input queues a piece of input without ever blocking init's loop: a full
// queue kills the command. Input for a command that has ended is dropped.
func (t *streamTable) input(in *input, kills *killTable) {
	t.mu.Lock()
	q, ok := t.m[in.ID]
	if ok && in.EOF {
		delete(t.m, in.ID)
		close(q)
	}
	if !ok || in.EOF || len(in.Data) == 0 {
		t.mu.Unlock()
		return
	}
	select {
	case q <- in.Data:
		t.mu.Unlock()
	default:
		delete(t.m, in.ID)
		close(q)
		t.mu.Unlock()
		kills.kill(in.ID)
	}
}

// runStream runs a streaming command for request id.
func runStream(parent context.Context, id int, q chan []byte, r *execReq, emit func([]byte)) (*Result, error) {
	defer streams.close(id)
	ctx, cancel := context.WithTimeout(parent, r.Timeout)
	defer cancel()
	cmd, res := newCommand(ctx, r)
	if res != nil {
		return res, nil
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	defer pr.Close()
	go feed(ctx, pw, q)
	out := &flushWriter{max: r.OutputBytes, emit: emit, over: cancel}
	errs := &cappedBuffer{max: streamStderr}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = pr, out, errs
	start := time.Now()
	err, werr := runOnThread(cmd)
	if err != nil {
		_ = pw.Close()
		return nil, err
	}
	res = &Result{Duration: time.Since(start), Output: errs.buf.Bytes(), Dropped: errs.dropped + out.dropped}
	if ctx.Err() == context.DeadlineExceeded {
		res.TimedOut = true
	}
	classify(res, werr)
	return res, nil
}

// feed writes queued input to the command's standard input until the
// queue closes (end of input) or the command's context ends; closing the
// pipe then also ends a write the command is not reading.
func feed(ctx context.Context, pw *os.File, q chan []byte) {
	defer pw.Close()
	stop := context.AfterFunc(ctx, func() { _ = pw.Close() })
	defer stop()
	for b := range q {
		if _, err := pw.Write(b); err != nil {
			return
		}
	}
}

// flushWriter sends every write on at once, up to max bytes in all; the
// write that would pass max kills the command instead.
type flushWriter struct {
	mu      sync.Mutex
	sent    int
	max     int
	dropped int64
	emit    func([]byte)
	over    func()
}

func (w *flushWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.sent+len(p) > w.max {
		w.dropped += int64(len(p))
		w.over()
		return len(p), nil
	}
	w.sent += len(p)
	for q := p; len(q) > 0; {
		n := min(len(q), chunkBytes)
		w.emit(q[:n]) // emit keeps none of it
		q = q[n:]
	}
	return len(p), nil
}
