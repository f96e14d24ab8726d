//go:build linux

package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"
)

// pendingCall is a request waiting for init's reply.
type pendingCall struct {
	ch    chan response
	nonce string
	out   sink
}

// sink takes a command's output chunks as they arrive (in readLoop, which
// must never block on it) and completes its final reply. room is asked
// before a chunk's bytes are read, add gets them; finish gets the final
// reply. Only readLoop calls them.
type sink interface {
	room(r response) error
	add(chunk []byte)
	finish(r *response)
}

// chunkFits refuses a chunk that would take what a sink holds (held) past
// its cap, one larger than init ever sends, or one on a final reply.
func chunkFits(r response, held, max int) error {
	if r.Result != nil || r.Error != "" || r.ChunkLen <= 0 || r.ChunkLen > chunkBytes || held+r.ChunkLen > max {
		return fmt.Errorf("request %d got an output chunk of %d bytes it cannot take (past its cap of %d bytes, larger than a chunk, or on a final reply)", r.ID, r.ChunkLen, max)
	}
	return nil
}

// streamed gathers the output chunks of one command, up to its cap, and
// passes them on to live when the command has Command.Live. The chunks
// are joined once, at the end, into a slice of the output's size.
type streamed struct {
	parts [][]byte
	own   bool // the last part is the sink's own copy, for small chunks to add to
	held  int
	max   int
	live  *liveQueue
}

func (s *streamed) room(r response) error { return chunkFits(r, s.held, s.max) }

// add keeps a chunk as it is, or copies a small one onto its own last
// part: a flood of tiny chunks then costs the harness their bytes, not a
// slice each.
func (s *streamed) add(chunk []byte) {
	s.held += len(chunk)
	s.live.push(chunk)
	switch last := len(s.parts) - 1; {
	case len(chunk) >= smallChunk:
		s.parts, s.own = append(s.parts, chunk), false
	case s.own:
		s.parts[last] = append(s.parts[last], chunk...)
	default:
		s.parts, s.own = append(s.parts, bytes.Clone(chunk)), true
	}
}

// finish puts the chunks in front of the final reply's output (and gives
// live the rest).
func (s *streamed) finish(r *response) {
	if r.Result == nil {
		return
	}
	s.live.push(r.Result.Output)
	if s.held == 0 {
		return
	}
	out := make([]byte, 0, s.held+len(r.Result.Output))
	for _, p := range s.parts {
		out = append(out, p...)
	}
	r.Result.Output = append(out, r.Result.Output...)
	s.parts = nil
}

// StreamBuffer bounds the standard output a streaming command may have
// written that the harness has not read yet; past it the command is killed
// and reading fails. readLoop serves every command of the box, so it
// never waits for a slow reader.
const StreamBuffer = 8 << 20

// Process is a long-lived command started by Box.Start, with standard input
// and output open for a protocol (an MCP server speaking JSON-RPC). It has
// the confinement of every command of the box; Command.Timeout bounds its
// life, Command.OutputBytes (or the box's limit) the total it may write,
// and it is killed when the Start context ends, on Kill, and with the box.
type Process struct {
	b    *Box
	id   int
	out  *streamSink
	done chan struct{}
	res  *Result
	err  error
}

// Start runs a streaming command in the box. Standard error is kept, capped,
// in the Result that Wait returns.
func (b *Box) Start(ctx context.Context, c Command) (*Process, error) {
	if len(c.Args) == 0 {
		return nil, errors.New("sandbox: empty command")
	}
	if b.unconfined {
		return nil, errors.New("sandbox: streaming commands run only in a box, and isolation: none has none")
	}
	timeout := c.Timeout
	if timeout <= 0 || timeout > b.limits.Timeout {
		timeout = b.limits.Timeout
	}
	out := &streamSink{max: b.outputBytes(c), queueMax: StreamBuffer, overflowed: make(chan struct{})}
	out.cond = sync.NewCond(&out.mu)
	req := request{Exec: &execReq{Args: c.Args, Dir: c.Dir, Env: b.env, Timeout: timeout, OutputBytes: out.max, Stream: true}}
	ch, err := b.send(&req, out)
	if err != nil {
		return nil, err
	}
	p := &Process{b: b, id: req.ID, out: out, done: make(chan struct{})}
	go func() {
		select {
		case <-out.overflowed:
			p.Kill()
		case <-p.done:
		}
	}()
	go func() {
		start := time.Now()
		resp, err := b.await(ctx, req.ID, ch, timeout+15*time.Second)
		if err == nil && resp.Error != "" {
			err = errors.New(resp.Error)
		}
		p.res, p.err = resp.Result, err
		b.audit.command(c, p.res, err, time.Since(start))
		out.end()
		close(p.done)
	}()
	return p, nil
}

// Write sends bytes to the command's standard input. A command that
// leaves its input unread is killed rather than let it back up in init.
func (p *Process) Write(data []byte) (int, error) {
	for q := data; len(q) > 0; {
		n := min(len(q), chunkBytes)
		if err := p.send(&input{ID: p.id, Data: q[:n]}); err != nil {
			return len(data) - len(q), err
		}
		q = q[n:]
	}
	return len(data), nil
}

// CloseStdin ends the command's standard input.
func (p *Process) CloseStdin() error { return p.send(&input{ID: p.id, EOF: true}) }

func (p *Process) send(in *input) error {
	select {
	case <-p.done:
		return fmt.Errorf("sandbox: %w: the command has exited", os.ErrClosed)
	default:
	}
	p.b.mu.Lock()
	defer p.b.mu.Unlock()
	if err := p.b.enc.Encode(request{Input: in}); err != nil {
		return fmt.Errorf("sandbox: send: %w", err)
	}
	return nil
}

// Read reads the command's standard output; io.EOF once it has exited and
// everything it wrote was read.
func (p *Process) Read(b []byte) (int, error) { return p.out.read(b) }

// Kill stops the command (and everything it started, with its PID
// namespace). Wait then returns its result.
func (p *Process) Kill() {
	select {
	case <-p.done:
		return
	default:
	}
	p.b.mu.Lock()
	defer p.b.mu.Unlock()
	_ = p.b.enc.Encode(request{Kill: p.id})
}

// Wait waits for the command to end and returns its result, whose Output
// is its standard error (capped).
func (p *Process) Wait() (*Result, error) {
	<-p.done
	return p.res, p.err
}

// Done is closed when the command has ended.
func (p *Process) Done() <-chan struct{} { return p.done }

// streamSink queues a streaming command's output for Read.
type streamSink struct {
	mu         sync.Mutex
	cond       *sync.Cond
	buf        []byte // written, not yet read
	total, max int
	queueMax   int
	overflow   bool
	ended      bool
	overflowed chan struct{} // closed when the unread output passes queueMax
}

func (s *streamSink) room(r response) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return chunkFits(r, s.total, s.max)
}

func (s *streamSink) add(chunk []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.total += len(chunk)
	switch {
	case s.overflow:
	case len(s.buf)+len(chunk) > s.queueMax:
		s.overflow, s.buf = true, nil
		close(s.overflowed)
	default:
		s.buf = append(s.buf, chunk...)
	}
	s.cond.Broadcast()
}

// finish: the final reply carries the command's standard error, not its
// output, so there is nothing to join.
func (s *streamSink) finish(*response) {}

// end wakes readers once the command has ended (or the box died).
func (s *streamSink) end() {
	s.mu.Lock()
	s.ended = true
	s.cond.Broadcast()
	s.mu.Unlock()
}

func (s *streamSink) read(b []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for len(s.buf) == 0 && !s.ended && !s.overflow {
		s.cond.Wait()
	}
	switch {
	case s.overflow:
		return 0, fmt.Errorf("sandbox: the command wrote more than %d bytes the harness had not read; it was killed", s.queueMax)
	case len(s.buf) == 0:
		return 0, io.EOF
	}
	n := copy(b, s.buf)
	s.buf = s.buf[n:]
	if len(s.buf) == 0 {
		s.buf = nil
	}
	return n, nil
}
