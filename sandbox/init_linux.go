//go:build linux

package sandbox

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sync"

	"golang.org/x/sys/unix"
)

func runRole(role string) int {
	switch role {
	case "init":
		return runInit()
	case "probe":
		return runProbe()
	case "tmpfs":
		return runTmpfs()
	}
	fmt.Fprintf(os.Stderr, "sandbox: unknown helper role %q\n", role)
	return 2
}

// conn frames JSON messages over the socket to the harness.
type conn struct {
	mu  sync.Mutex
	w   io.Writer // the socket, for a chunk's bytes
	enc *json.Encoder
	dec *json.Decoder
}

func (c *conn) send(r response) {
	c.mu.Lock()
	defer c.mu.Unlock()
	_ = c.enc.Encode(r)
}

// sendChunk sends a piece of request id's output: its line, then its bytes
// as they are (see reply_linux.go). It keeps no reference to b.
func (c *conn) sendChunk(id int, nonce string, b []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.enc.Encode(response{ID: id, Nonce: nonce, ChunkLen: len(b)}) == nil {
		_, _ = c.w.Write(b)
	}
}

// runInit is PID 1 of the box: it builds the filesystem view, locks itself
// down and then runs commands until the harness goes away.
func runInit() int {
	// The harness passed fds 3 to tasksFD+2 without close-on-exec, and
	// whatever it inherited itself without it (a shell's or CI runner's
	// pipes and sockets) came along too: no command may inherit any.
	if unix.CloseRange(3, ^uint(0), unix.CLOSE_RANGE_CLOEXEC) != nil {
		for fd := 3; fd < 1<<16; fd++ {
			unix.CloseOnExec(fd)
		}
	}
	f := os.NewFile(3, "sandgate-box")
	cmdCgroup = os.NewFile(4, "sandgate-cmd-cgroup")
	cmdTasks = os.NewFile(tasksFD, "sandgate-cmd-tasks")
	cmdMemTasks = os.NewFile(tasksFD+1, "sandgate-cmd-mem-tasks")
	memTasks = os.NewFile(tasksFD+2, "sandgate-mem-tasks")
	c := &conn{w: f, enc: json.NewEncoder(f), dec: json.NewDecoder(bufio.NewReader(f))}
	// What no option changes is built before the setup is read: in a
	// pooled init, while it waits to be taken (see prep_linux.go).
	prep := prepareFromEnv()
	ptr := newTracer("prep")
	progs := prepareSeccompFromEnv()
	ptr.mark("seccomp")
	_, _ = warmCodec()
	ptr.mark("codec")
	var req request
	if err := c.dec.Decode(&req); err != nil || req.Setup == nil {
		fmt.Fprintln(os.Stderr, "sandbox init: no setup message:", err)
		return 1
	}
	nestedUser, cgroupV1 = req.Setup.NestedUser, req.Setup.CgroupV1
	itr = newTracer("init")
	layers, err := buildBox(req.Setup, prep)
	if err == nil {
		var more []string
		more, err = lockDown(req.Setup.NestedUser, progs)
		layers = append(layers, more...)
	}
	itr.mark("lockDown")
	if err == nil {
		var more []string
		more, err = startSpawner(req.Setup.NestedUser)
		layers = append(layers, more...)
	}
	itr.mark("startSpawner")
	if err != nil {
		c.send(response{ID: req.ID, Nonce: req.Nonce, Error: err.Error(), Layers: layers})
		return 1
	}
	c.send(response{ID: req.ID, Nonce: req.Nonce, Layers: layers})
	kills := &killTable{m: map[int]context.CancelFunc{}}
	for {
		var r request
		if err := c.dec.Decode(&r); err != nil {
			if err != io.EOF {
				fmt.Fprintln(os.Stderr, "sandbox init:", err)
			}
			return 0 // the harness is gone: exiting kills the whole box
		}
		if r.Kill != 0 {
			kills.kill(r.Kill)
			continue
		}
		if r.Input != nil {
			streams.input(r.Input, kills)
			continue
		}
		if r.Exec == nil {
			c.send(response{ID: r.ID, Nonce: r.Nonce, Error: "unknown request"})
			continue
		}
		serveExec(c, kills, r)
	}
}

// warmCodec has encoding/json build its codecs for the channel's
// messages before the setup arrives: a fresh init built them while it
// decoded its setup and encoded its answer, on the box's start (≈ 1 ms
// by trace at load 7, issue 25). It decodes a made-up setup and encodes
// an answer to nothing: no state of init changes.
// It returns the made-up setup (for its test).
func warmCodec() (*request, error) {
	var r request
	err := json.Unmarshal([]byte(`{"id":1,"nonce":"n","setup":{"root":"/r","disk":"/d","workspace":"/w","layers":["l"],`+
		`"read_only":["/o"],"caches":[{"host":"/h","lower":["/l"],"box":"/b","env":"E"}],"git_ro":true,"nested_user":true}}`), &r)
	if err == nil {
		err = json.NewEncoder(io.Discard).Encode(response{ID: 1, Nonce: "n", Layers: []string{"l"}, Result: &Result{Output: []byte("o")}})
	}
	return &r, err
}

// serveExec runs one command request on its own goroutine.
func serveExec(c *conn, kills *killTable, r request) {
	var q chan []byte
	if r.Exec.Stream {
		q = streams.open(r.ID) // before any input for it can arrive
	}
	// Registered before the command starts, so a kill that follows the
	// request at once is not lost.
	ctx, cancel := context.WithCancel(context.Background())
	kills.add(r.ID, cancel)
	go func() {
		defer cancel()
		defer kills.done(r.ID)
		// emit sends b before it returns and keeps none of it: the
		// writers reuse their buffers.
		emit := func(b []byte) {
			if len(b) > 0 {
				c.sendChunk(r.ID, r.Nonce, b)
			}
		}
		var res *Result
		var err error
		if r.Exec.Stream {
			res, err = runStream(ctx, r.ID, q, r.Exec, emit)
		} else {
			res, err = runCommand(ctx, r.Exec, emit)
		}
		resp := response{ID: r.ID, Nonce: r.Nonce, Result: res}
		if err != nil {
			resp.Error = err.Error()
		}
		c.send(resp)
	}()
}

// killTable maps running requests to their cancel functions.
type killTable struct {
	mu sync.Mutex
	m  map[int]context.CancelFunc
}

func (k *killTable) add(id int, c context.CancelFunc) { k.mu.Lock(); k.m[id] = c; k.mu.Unlock() }

func (k *killTable) done(id int) { k.mu.Lock(); delete(k.m, id); k.mu.Unlock() }

func (k *killTable) kill(id int) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if c := k.m[id]; c != nil {
		c()
	}
}
