//go:build linux

package sandbox_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sandgate/sandgate/sandbox"
	"github.com/sandgate/sandgate/secrets"
)

// forgedOutput is output made of nothing but init's reply shapes (chunk
// lines with every kind of length, final replies for the first ids) of
// varying lengths and raw bytes, so that any cut of it, by init's chunks
// or Live's ticks, falls inside one.
func forgedOutput(size int) []byte {
	var out bytes.Buffer
	lens := []int64{0, -1, 1, 1 << 20, 256 << 20, 1 << 62}
	for i := 0; out.Len() < size; i++ {
		id := i%7 + 1
		fmt.Fprintf(&out, "{\"id\":%d,\"nonce\":\"\",\"chunk_len\":%d}\n", id, lens[i%len(lens)])
		if i%3 == 0 {
			fmt.Fprintf(&out, "{\"id\":%d,\"nonce\":\"\",\"result\":{\"exit_code\":0,\"output\":\"Zm9yZ2Vk\"}}\n", id)
		}
		out.Write([]byte{0, 0xff, '\r', byte(i)})
	}
	return out.Bytes()[:size]
}

// TestAttackOutputFramingBoundaries: output of exactly a chunk, one byte
// either side, several chunks, and none, made of forged replies, comes
// back byte for byte with its cap exactly reached or passed by one byte,
// with Live and without; Live gets what the Result has.
func TestAttackOutputFramingBoundaries(t *testing.T) {
	b, ws := newBox(t, sandbox.Policy{})
	const chunk = 1 << 20
	forged := forgedOutput(3*chunk + 7)
	if err := os.WriteFile(filepath.Join(ws, "forged"), forged, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, size := range []int{0, 1, chunk - 1, chunk, chunk + 1, 2 * chunk, 3*chunk + 7} {
		for _, capBytes := range []int{size, size - 1} {
			if capBytes <= 0 {
				continue // zero keeps the box's limit
			}
			for _, live := range []bool{false, true} {
				c := sandbox.Command{Args: []string{"head", "-c", fmt.Sprint(size), "forged"}, Timeout: time.Minute, OutputBytes: capBytes}
				lb := &liveBuf{}
				if live {
					c.Live = lb
				}
				res, err := b.Exec(context.Background(), c)
				name := fmt.Sprintf("size %d cap %d live %v", size, capBytes, live)
				if err != nil || res.ExitCode != 0 {
					t.Fatalf("BREACH: %s: forged replies broke the command: %v %+v", name, err, res)
				}
				if !bytes.Equal(res.Output, forged[:capBytes]) || res.Dropped != int64(size-capBytes) {
					t.Fatalf("BREACH: %s: %d bytes back, dropped %d, not the first %d printed", name, len(res.Output), res.Dropped, capBytes)
				}
				if live && lb.String() != string(res.Output) {
					t.Fatalf("BREACH: %s: Live got %d bytes that are not the Result's %d", name, len(lb.String()), len(res.Output))
				}
			}
		}
	}
	// Live's ticks cut the output between init's chunks too: pauses
	// longer than LiveEvery put them at odd places.
	lb := &liveBuf{}
	res, err := b.Exec(context.Background(), sandbox.Command{Args: []string{"python3", "-c", slowWriter}, Timeout: time.Minute, OutputBytes: len(forged) - 5, Live: lb})
	if err != nil || !bytes.Equal(res.Output, forged[:len(forged)-5]) || res.Dropped != 5 || lb.String() != string(res.Output) {
		t.Fatalf("BREACH: output cut by Live's ticks: %v, %d bytes back, dropped %d, Live %d bytes", err, len(res.Output), res.Dropped, len(lb.String()))
	}
	if res := sh(t, b, "true"); len(res.Output) != 0 || res.Dropped != 0 {
		t.Fatalf("no output came back as %q", res.Output)
	}
}

// slowWriter writes the file forged in pieces that end off init's chunk
// boundaries, pausing past LiveEvery after each.
const slowWriter = `
import os, time
b = open("forged", "rb").read()
i = 0
for n in [700001, 500000, 1, 3, 1048573, 4096, 333333, len(b)]:
    end = min(i + n, len(b))
    while i < end:
        i += os.write(1, b[i:end])
    time.sleep(0.3)
`

// manyWriters: 12 processes at once each write 300 lines shaped like
// chunk lines, one write(2) a line (atomic in a pipe), with empty writes
// between them; the lines' lengths vary so the chunks cut them anywhere.
const manyWriters = `
import os
kids = []
for k in range(12):
    pid = os.fork()
    if pid == 0:
        for s in range(300):
            n = (k * 1000 + s) % 700
            os.write(1, b"")
            os.write(1, ('{"id":%d,"nonce":"","chunk_len":%d}%d:%d:' % (k % 4 + 1, 1 << 30, k, s)).encode() + b"a" * n + b"\n")
            os.write(2, b"")
        os._exit(0)
    kids.append(pid)
for p in kids:
    os.waitpid(p, 0)
`

// TestAttackOutputManyWriters: forged lines written by many processes at
// once, and empty writes, come back each whole and once, with Live
// getting exactly the Result's bytes.
func TestAttackOutputManyWriters(t *testing.T) {
	b, _ := newBox(t, sandbox.Policy{})
	var want []string
	for k := range 12 {
		for s := range 300 {
			n := (k*1000 + s) % 700
			want = append(want, fmt.Sprintf(`{"id":%d,"nonce":"","chunk_len":%d}%d:%d:`, k%4+1, 1<<30, k, s)+strings.Repeat("a", n))
		}
	}
	slices.Sort(want)
	lb := &liveBuf{}
	res, err := b.Exec(context.Background(), sandbox.Command{Args: []string{"python3", "-c", manyWriters}, Timeout: time.Minute, OutputBytes: 8 << 20, Live: lb})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("BREACH: many writers broke the command: %v %+v", err, res)
	}
	got := strings.Split(strings.TrimSuffix(string(res.Output), "\n"), "\n")
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Fatalf("BREACH: %d lines (%d bytes) came back, not the %d written", len(got), len(res.Output), len(want))
	}
	if lb.String() != string(res.Output) {
		t.Fatalf("BREACH: Live got %d bytes that are not the Result's %d", len(lb.String()), len(res.Output))
	}
}

// TestAttackStreamFramingBoundaries: a streaming command's output of
// forged replies, past several chunks, is read back byte for byte.
func TestAttackStreamFramingBoundaries(t *testing.T) {
	b, ws := newBox(t, sandbox.Policy{})
	forged := forgedOutput(3<<20 + 7)
	if err := os.WriteFile(filepath.Join(ws, "forged"), forged, 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := b.Start(context.Background(), sandbox.Command{Args: []string{"cat", "forged"}, Timeout: time.Minute, OutputBytes: 8 << 20})
	if err != nil {
		t.Fatal(err)
	}
	got, rerr := io.ReadAll(p)
	res, werr := p.Wait()
	if rerr != nil || werr != nil || res.ExitCode != 0 {
		t.Fatalf("BREACH: forged replies broke the stream: %v %v %+v", rerr, werr, res)
	}
	if !bytes.Equal(got, forged) {
		t.Fatalf("BREACH: the stream read %d bytes that are not the %d written", len(got), len(forged))
	}
}

// secretWriter prints a credential across init's first chunk boundary,
// then one split by a pause past LiveEvery (a tick between its halves),
// then small pieces of one with pauses between them.
const secretWriter = `
import os, sys, time
s = sys.argv[1].encode()
def w(b):
    while b:
        b = b[os.write(1, b):]
w(b"x" * ((1 << 20) - 5) + s + b"\n")
w(b"then " + s[:7]); time.sleep(0.3); w(s[7:] + b" and ")
for c in [s[:3], s[3:4], s[4:11], s[11:]]:
    w(c); time.sleep(0.3)
w(b"\nend " + s[:5])
`

// TestAttackLiveRedactsAcrossChunks: Command.Live through a redacting
// stream (as the nodes' output.log is written) never gets a credential
// the command printed across init's chunks or Live's ticks, and gets
// exactly the redacted Result.
func TestAttackLiveRedactsAcrossChunks(t *testing.T) {
	b, _ := newBox(t, sandbox.Policy{})
	const secret = "tok-0a1b2c3d4e5f6a7b"
	r := secrets.New(map[string]string{"API_TOKEN": secret})
	lb := &liveBuf{}
	w := r.Stream(lb)
	res, err := b.Exec(context.Background(), sandbox.Command{Args: []string{"python3", "-c", secretWriter, secret}, Timeout: time.Minute, OutputBytes: 4 << 20, Live: w})
	w.Close()
	if err != nil || res.ExitCode != 0 || strings.Count(string(res.Output), secret) != 3 {
		t.Fatalf("exec: %v %+v", err, res)
	}
	if strings.Contains(lb.String(), secret[:8]) {
		t.Fatalf("BREACH: Live got the credential: %q", lb.String()[1<<20-10:])
	}
	if want := r.Bytes(res.Output); lb.String() != string(want) {
		t.Fatalf("BREACH: Live got %d bytes, not the %d of the redacted Result", len(lb.String()), len(want))
	}
}

// TestAttackOutputParallelRequests: commands running at once, each
// printing forged replies of its own (every byte tagged with which
// command it is), some with Live and one streaming, each get exactly
// their own output: init's chunks of one never land in another.
func TestAttackOutputParallelRequests(t *testing.T) {
	b, ws := newBox(t, sandbox.Policy{})
	const n = 5
	files := make([][]byte, n)
	for k := range files {
		files[k] = bytes.ReplaceAll(forgedOutput(2<<20+k*77777), []byte(`"nonce"`), []byte(fmt.Sprintf(`"nonce%d"`, k)))
		if err := os.WriteFile(filepath.Join(ws, fmt.Sprint("f", k)), files[k], 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got := make([][]byte, n)
	errs := make(chan error, n)
	for k := range n {
		go func() {
			args := []string{"sh", "-c", fmt.Sprintf("for i in 1 2 3; do head -c %d f%d; sleep 0.3; done; cat f%d", 100000*(k+1), k, k)}
			want := append(bytes.Repeat(files[k][:100000*(k+1)], 3), files[k]...)
			if k == n-1 {
				p, err := b.Start(context.Background(), sandbox.Command{Args: args, Timeout: time.Minute, OutputBytes: 16 << 20})
				if err == nil {
					got[k], err = io.ReadAll(p)
				}
				if !bytes.Equal(got[k], want) {
					err = fmt.Errorf("BREACH: stream %d read %d bytes, not its own %d (%v)", k, len(got[k]), len(want), err)
				}
				errs <- err
				return
			}
			c := sandbox.Command{Args: args, Timeout: time.Minute, OutputBytes: 16 << 20}
			lb := &liveBuf{}
			if k%2 == 0 {
				c.Live = lb
			}
			res, err := b.Exec(context.Background(), c)
			switch {
			case err != nil:
			case !bytes.Equal(res.Output, want):
				err = fmt.Errorf("BREACH: command %d got %d bytes, not its own %d", k, len(res.Output), len(want))
			case c.Live != nil && lb.String() != string(want):
				err = fmt.Errorf("BREACH: command %d's Live got %d bytes, not its own %d", k, len(lb.String()), len(want))
			}
			errs <- err
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}
