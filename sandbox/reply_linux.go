//go:build linux

package sandbox

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// Init's replies are JSON lines (json.Encoder's). A chunk of a command's
// output is a line with chunk_len N followed by exactly N bytes as the
// command wrote them: no base64, no JSON to scan, so 64 MiB of output
// costs the harness one read and one copy. The bytes are framed by the
// length, never searched for a newline, so nothing a command prints can
// end a chunk early or pass as a reply; and the harness checks a chunk's
// length against its cap (and against chunkBytes) before it reads or
// allocates any of it.

// maxReplyLine bounds one reply line: a final reply carries less than a
// chunk of output (base64, a third larger) and a little more.
const maxReplyLine = 2*chunkBytes + 1<<20

// replyBuffer is the reader's buffer for reply lines; a chunk's bytes
// larger than it are read straight into their own slice.
const replyBuffer = 64 << 10

// readLoop hands each response to the request waiting for it. Bytes from
// any process but init, or a reply that does not answer a pending request
// with its nonce, end the box: a forged reply is never taken.
func (b *Box) readLoop() {
	cr, err := newCredReader(b.sock, b.cmd.Process.Pid)
	if err != nil {
		b.fail(err)
		return
	}
	b.fail(b.readReplies(bufio.NewReaderSize(cr, replyBuffer)))
}

// readReplies delivers replies until the channel fails, and returns why.
func (b *Box) readReplies(br *bufio.Reader) error {
	for {
		line, err := readReplyLine(br)
		if err != nil {
			return err
		}
		var r response
		if err := json.Unmarshal(line, &r); err != nil {
			return err
		}
		if err := b.deliver(br, r); err != nil {
			return err
		}
	}
}

// deliver hands r to its request: a chunk's bytes (read from br once the
// request's sink has room for them) to the sink, a final reply to the
// caller.
func (b *Box) deliver(br *bufio.Reader, r response) error {
	b.mu.Lock()
	p, ok := b.pending[r.ID]
	var err error
	switch {
	case !ok || p.nonce != r.Nonce:
		err = fmt.Errorf("a reply for request %d that no pending request sent (forged or replayed): the box was killed", r.ID)
	case r.ChunkLen != 0:
		err = p.out.room(r)
	default:
		delete(b.pending, r.ID)
	}
	b.mu.Unlock()
	switch {
	case err != nil:
		return err
	case r.ChunkLen == 0:
		p.out.finish(&r)
		p.ch <- r
		return nil
	}
	// Read without b.mu: a slow init must not hold up requests (a kill).
	chunk := make([]byte, r.ChunkLen)
	if _, err := io.ReadFull(br, chunk); err != nil {
		return fmt.Errorf("request %d: output chunk cut short: %w", r.ID, noEOF(err))
	}
	p.out.add(chunk)
	return nil
}

// readReplyLine reads one line of at most maxReplyLine bytes.
func readReplyLine(br *bufio.Reader) ([]byte, error) {
	line, err := br.ReadSlice('\n')
	var long []byte
	for errors.Is(err, bufio.ErrBufferFull) {
		if long = append(long, line...); len(long) > maxReplyLine {
			return nil, fmt.Errorf("a reply line longer than %d bytes", maxReplyLine)
		}
		line, err = br.ReadSlice('\n')
	}
	if err != nil {
		if len(long)+len(line) > 0 {
			err = noEOF(err)
		}
		return nil, err
	}
	if long != nil {
		line = append(long, line...)
	}
	if len(line) > maxReplyLine {
		return nil, fmt.Errorf("a reply line longer than %d bytes", maxReplyLine)
	}
	return line, nil
}

// noEOF turns the end of the channel inside a reply into an error that
// kills the box, as a truncated reply is not a clean exit.
func noEOF(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}
