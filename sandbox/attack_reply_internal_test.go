//go:build linux

package sandbox

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
)

// countingReader counts the bytes the harness took off the channel.
type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

// replyBox is a box with one pending command (request 1, nonce "n") whose
// output is capped at max bytes, fed the channel bytes wire.
func replyBox(max int, wire string) (*Box, *streamed, chan response, *countingReader, error) {
	out := &streamed{max: max}
	ch := make(chan response, 1)
	b := &Box{pending: map[int]pendingCall{1: {ch: ch, nonce: "n", out: out}}}
	cr := &countingReader{r: strings.NewReader(wire)}
	err := b.readReplies(bufio.NewReaderSize(cr, replyBuffer))
	return b, out, ch, cr, err
}

func chunkLine(n int) string { return fmt.Sprintf(`{"id":1,"nonce":"n","chunk_len":%d}`+"\n", n) }

// TestAttackReplyChunkPastCap: init's replies, as a compromised init
// could write them, cannot make the harness hold more of a command's
// output than the cap the harness set: a chunk that would pass it (or
// that is larger than init ever sends, or malformed) ends the box before
// a byte of it is read or allocated.
func TestAttackReplyChunkPastCap(t *testing.T) {
	big := strings.Repeat("x", 4<<20) // far more than any refused chunk's header
	cases := []struct {
		name string
		max  int
		wire string
	}{
		{"chunk past the cap", 1000, chunkLine(1001) + big},
		{"chunks adding up past the cap", 1000, chunkLine(600) + big[:600] + chunkLine(401) + big},
		{"chunk larger than a chunk", MaxOutputBytes, chunkLine(chunkBytes+1) + big},
		{"huge chunk length", MaxOutputBytes, chunkLine(1<<62) + big},
		{"negative chunk length", 1000, chunkLine(-5) + big},
		{"chunk on a final reply", 1000, `{"id":1,"nonce":"n","chunk_len":10,"result":{"exit_code":0}}` + "\n" + big},
		{"chunk with another nonce", 1000, `{"id":1,"nonce":"m","chunk_len":10}` + "\n" + big},
		{"reply line past its bound", 1000, `{"id":1,"nonce":"n","error":"` + big + `"}` + "\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, out, ch, cr, err := replyBox(c.max, c.wire)
			if err == nil || errors.Is(err, io.EOF) {
				t.Fatalf("BREACH: the reply was taken (err %v)", err)
			}
			if out.held > c.max {
				t.Fatalf("BREACH: the harness holds %d bytes of output past its cap of %d", out.held, c.max)
			}
			if c.name != "reply line past its bound" && cr.n > 2*replyBuffer {
				t.Fatalf("BREACH: the harness read %d bytes of a refused chunk", cr.n)
			}
			if len(ch) != 0 {
				t.Fatal("BREACH: the caller got a reply")
			}
		})
	}
}

// TestReplyChunksJoin: honest chunks up to exactly the cap are taken and
// put, in order, in front of the final reply's output; a chunk cut short
// by the channel's end kills the box rather than pass as a clean exit.
func TestReplyChunksJoin(t *testing.T) {
	a, b2 := strings.Repeat("a", 700), strings.Repeat("b", 300)
	wire := chunkLine(700) + a + chunkLine(300) + b2 + `{"id":1,"nonce":"n","result":{"exit_code":3,"output":"dGFpbA==","dropped":9}}` + "\n"
	box, _, ch, _, err := replyBox(1000, wire)
	if !errors.Is(err, io.EOF) || len(ch) != 1 {
		t.Fatalf("readReplies: %v, want the channel's clean end after the reply", err)
	}
	r := <-ch
	if r.Result == nil || string(r.Result.Output) != a+b2+"tail" || r.Result.Dropped != 9 || r.Result.ExitCode != 3 {
		t.Fatalf("final reply %+v", r.Result)
	}
	if len(box.pending) != 0 {
		t.Fatal("the answered request is still pending")
	}
	// A final reply longer than the reader's buffer (the rest of a
	// command's output, short of a chunk) is read whole.
	rest := bytes.Repeat([]byte("r"), chunkBytes-1)
	line, _ := json.Marshal(response{ID: 1, Nonce: "n", Result: &Result{Output: rest}})
	_, _, ch, _, err = replyBox(1000, string(line)+"\n")
	if !errors.Is(err, io.EOF) || len(ch) != 1 {
		t.Fatalf("long final reply: %v", err)
	}
	if r := <-ch; r.Result == nil || !bytes.Equal(r.Result.Output, rest) {
		t.Fatalf("long final reply: %+v", r)
	}
	_, _, _, _, err = replyBox(1000, chunkLine(700)+a[:10])
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("cut chunk: %v, want an unexpected EOF", err)
	}
	if _, _, _, _, err = replyBox(1000, `{"id":1,"nonce":"n"`); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("cut reply line: %v, want an unexpected EOF", err)
	}
}
