//go:build linux

package sandbox

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// outputBytes is the capture cap of one command.
func (b *Box) outputBytes(c Command) int {
	if c.OutputBytes > 0 {
		return min(c.OutputBytes, MaxOutputBytes)
	}
	return b.limits.OutputBytes
}

// Box is a running sandbox. It is safe for concurrent use.
type Box struct {
	opts   Options
	limits Limits
	env    []string
	layers []string
	cmd    *exec.Cmd
	sock   *os.File
	// diskSock is where init waits for its disk (see handDisk).
	diskSock *os.File
	// pooled: init was started ahead, before this box asked for it;
	// spareDisk is the disk made with it (see diskpool_linux.go).
	pooled    bool
	spareDisk *disk
	// prepHost: init prepares the host's system in its root before its
	// setup, for a box without an image (see prep_linux.go).
	prepHost bool
	enc      *json.Encoder
	mu       sync.Mutex
	nextID   int
	pending  map[int]pendingCall
	dead     chan struct{}
	deadErr  error
	cg       *cgroups
	audit    *auditLog
	closed   bool
	initLog  *lockedWriter
	// unconfined runs commands directly, for Isolation "none".
	unconfined bool
	// copyDir is the private workspace copy when no overlay is used.
	copyDir string
	// disk holds everything the box writes, within the disk limit; it
	// is made while init starts (see startDisk).
	disk    *disk
	diskc   chan diskResult
	diskErr error
	// caches are the caches mounted, in the order init mounts them.
	caches []Cache
	// discarding: Close need not save a rootless box's disk (Discard).
	discarding bool
	// deadNS holds the mount namespaces of this box's inits, let go of
	// after Close (see release_linux.go).
	deadNS []*os.File
}

// Platform reports whether this OS can run boxes at all: nil on Linux
// (Check tells which layers work here), an error wrapping ErrUnavailable
// elsewhere. Callers use it to refuse before creating anything.
func Platform() error { return nil }

// Start builds a box. It fails, and runs nothing, if any layer of isolation
// cannot be set up.
func Start(ctx context.Context, o Options) (*Box, error) {
	if o.StateDir == "" {
		return nil, errors.New("sandbox: Options.StateDir is required")
	}
	if err := os.MkdirAll(o.StateDir, 0o700); err != nil {
		return nil, err
	}
	audit, err := auditOf(o)
	if err != nil {
		return nil, err
	}
	tr := newTracer("start")
	b, refill := boxFor(ctx, o)
	// The next box's init and disk are made once this one is built.
	defer refill()
	tr.mark("boxFor")
	b.opts, b.limits, b.env, b.audit = o, o.Policy.Limits.withDefaults(), BuildEnv(o.Policy, hostEnv), audit
	if o.Policy.Isolation == "none" {
		if o.Policy.RootFS != "" {
			b.Close()
			return nil, errors.New("sandbox: an image root (sandbox.image) needs a box: isolation: none runs commands on the host, with its tools")
		}
		if !o.AllowUnconfined {
			b.Close()
			return nil, errors.New("sandbox: the blueprint asks for isolation: none; pass --allow-unsandboxed (AllowUnconfined) to run commands unconfined")
		}
		b.unconfined = true
		b.layers = []string{"NONE: commands run unconfined on the host (isolation: none)"}
		return b, nil
	}
	if o.Seed != "" && (o.Snapshot == "" || o.NoOverlay) {
		b.Close()
		return nil, errors.New("sandbox: Options.Seed needs a Snapshot and an overlay")
	}
	b.startDisk(o.StateDir, b.limits.DiskBytes)
	tr.mark("startDisk")
	if o.Seed != "" {
		if err := b.awaitDisk(); err != nil {
			b.Close()
			return nil, err
		}
		if out, err := exec.CommandContext(ctx, "cp", "-a", "--", o.Seed+"/.", b.disk.path(diskUpper)).CombinedOutput(); err != nil {
			b.Close()
			return nil, fmt.Errorf("sandbox: seed the workspace: %w: %s", err, strings.TrimSpace(string(out)))
		}
		if err := markCopiedUp(b.disk.path(diskUpper), o.Snapshot); err != nil {
			b.Close()
			return nil, fmt.Errorf("sandbox: seed the workspace: %w", err)
		}
	}
	if o.Snapshot != "" && o.NoOverlay {
		if err := b.useCopy(ctx); err != nil {
			b.Close()
			return nil, err
		}
	}
	err = b.startInit(ctx)
	tr.mark("startInit")
	if err != nil && b.opts.Snapshot != "" && b.copyDir == "" && strings.Contains(err.Error(), "mount overlay workspace") {
		// The kernel refused an overlay in a user namespace: copy the
		// snapshot instead. Slower (one file created per file), same result.
		_ = b.stop()
		b.cmd, b.dead, b.pending, b.closed = nil, make(chan struct{}), map[int]pendingCall{}, false
		if err = b.useCopy(ctx); err == nil {
			err = b.startInit(ctx)
		}
	}
	if err != nil {
		b.Close()
		return nil, err
	}
	b.layers = append(b.layers, b.disk.describe(b.opts.Snapshot != ""))
	return b, nil
}

// useCopy switches the workspace to a private copy of the snapshot.
func (b *Box) useCopy(ctx context.Context) error {
	if err := b.awaitDisk(); err != nil {
		return err
	}
	dst := b.disk.path(diskCopy)
	if _, err := os.Stat(dst); err != nil {
		out, err := exec.CommandContext(ctx, "cp", "-a", b.opts.Snapshot, dst).CombinedOutput()
		if err != nil {
			return fmt.Errorf("copy the workspace: %w: %s", err, out)
		}
	}
	b.copyDir, b.opts.Workspace = dst, dst
	return nil
}

// stop kills init (and with it the box's PID namespace), closes the
// socket and removes the cgroups; Close and the overlay-to-copy retry use it.
func (b *Box) stop() error {
	tr := newTracer("stop")
	if b.cmd != nil && b.cmd.Process != nil {
		_ = b.cmd.Process.Kill()
		_ = b.cmd.Wait()
	}
	tr.mark("kill+wait")
	if b.sock != nil {
		b.sock.Close()
	}
	if b.diskSock != nil {
		b.diskSock.Close()
		b.diskSock = nil
	}
	b.spareDisk.discard()
	b.spareDisk = nil
	tr.mark("socks+spare")
	var err error
	if b.cg != nil {
		err = b.cg.remove()
		tr.mark("cg.remove")
		b.mu.Lock() // noteFilesHoldMemory reads it while a command returns
		b.cg = nil
		b.mu.Unlock()
	}
	return err
}

// fail records why the channel died and wakes every waiting call. A
// forged or stray reply also kills the box: its init can no longer be
// told apart from what runs in it.
func (b *Box) fail(err error) {
	var forged errForged
	if errors.As(err, &forged) || !errors.Is(err, io.EOF) && !errors.Is(err, os.ErrClosed) {
		if b.cmd != nil && b.cmd.Process != nil {
			_ = b.cmd.Process.Kill()
		}
	}
	b.mu.Lock()
	b.deadErr = fmt.Errorf("sandbox init exited: %w; %s", err, strings.TrimSpace(b.initLog.String()))
	b.mu.Unlock()
	close(b.dead)
}

// call sends a request and waits for its response; live, when not nil,
// gets the output as it comes (Command.Live).
func (b *Box) call(ctx context.Context, req request, backstop time.Duration, live *liveQueue) (response, error) {
	out := &streamed{live: live}
	if req.Exec != nil {
		out.max = req.Exec.OutputBytes
	}
	ch, err := b.send(&req, out)
	if err != nil {
		return response{}, err
	}
	return b.await(ctx, req.ID, ch, backstop)
}

// send registers a request with the sink for its output and sends it.
func (b *Box) send(req *request, out sink) (chan response, error) {
	ch := make(chan response, 1)
	b.mu.Lock()
	defer b.mu.Unlock()
	b.nextID++
	req.ID, req.Nonce = b.nextID, newNonce()
	b.pending[req.ID] = pendingCall{ch: ch, nonce: req.Nonce, out: out}
	if err := b.enc.Encode(req); err != nil {
		delete(b.pending, req.ID)
		return nil, fmt.Errorf("sandbox: send: %w", err)
	}
	return ch, nil
}

// await waits for request id's reply; a cancelled context kills the
// command and keeps waiting for its answer, within the backstop.
func (b *Box) await(ctx context.Context, id int, ch chan response, backstop time.Duration) (response, error) {
	timer := time.NewTimer(backstop)
	defer timer.Stop()
	for {
		select {
		case r := <-ch:
			return r, nil
		case <-b.dead:
			return response{}, b.deadErr
		case <-ctx.Done():
			b.mu.Lock()
			_ = b.enc.Encode(request{Kill: id})
			b.mu.Unlock()
			ctx = context.Background() // keep waiting for the killed command's answer
		case <-timer.C:
			// init did not answer in time: the kill switch does not rely on it.
			b.Close()
			return response{}, errors.New("sandbox: command did not finish within its timeout and the box was killed")
		}
	}
}

// Exec runs a command in the box and returns its result. A non-zero exit is
// a result, not an error; errors mean the box itself failed.
func (b *Box) Exec(ctx context.Context, c Command) (*Result, error) {
	if len(c.Args) == 0 {
		return nil, errors.New("sandbox: empty command")
	}
	timeout := c.Timeout
	if timeout <= 0 || timeout > b.limits.Timeout {
		timeout = b.limits.Timeout
	}
	start := time.Now()
	var res *Result
	var err error
	if b.unconfined {
		res, err = b.execUnconfined(ctx, c, timeout)
	} else {
		req := request{Exec: &execReq{Args: c.Args, Dir: c.Dir, Env: b.env, Timeout: timeout, OutputBytes: b.outputBytes(c), Stdin: c.Stdin, Live: c.Live != nil}}
		var live *liveQueue
		if c.Live != nil {
			live = newLiveQueue(c.Live)
		}
		var resp response
		resp, err = b.call(ctx, req, timeout+15*time.Second, live)
		live.close()
		if err == nil && resp.Error != "" {
			err = errors.New(resp.Error)
		}
		res = resp.Result
		b.noteDiskFull(res)
		err = b.noteFilesHoldMemory(res, err)
	}
	if err == nil && ctx.Err() != nil && res != nil && res.ExitCode != 0 {
		err = ctx.Err()
	}
	b.audit.command(c, res, err, time.Since(start))
	return res, err
}

// Layers describes the isolation this box runs with.
func (b *Box) Layers() []string { return append([]string(nil), b.layers...) }

// Env returns the environment commands see.
func (b *Box) Env() []string { return append([]string(nil), b.env...) }

// Upper returns the overlay's upper directory (what changed), or "" when
// the workspace is a copy.
func (b *Box) Upper() string {
	if b.opts.Snapshot == "" || b.copyDir != "" {
		return ""
	}
	if b.disk == nil {
		return filepath.Join(b.opts.StateDir, "upper") // unconfined: nothing is written there
	}
	return b.disk.path(diskUpper)
}

// CacheUpper returns the host directory that holds what the box's
// commands wrote into the cache mounted at box (Cache.Box): its own
// layer above the cache's read-only ones. It is "" when no such cache is
// mounted, and is valid until Close.
func (b *Box) CacheUpper(box string) string {
	if b.disk == nil {
		return ""
	}
	for i, c := range b.caches {
		if c.Box == box {
			return b.disk.path(diskCaches, strconv.Itoa(i), "upper")
		}
	}
	return ""
}

// presentCaches leaves out the layers of a cache that are not directories
// on the host, and a cache none of whose layers is: a cache the user
// never filled is not an error.
func presentCaches(caches []Cache) []Cache {
	isDir := func(p string) bool {
		st, err := os.Stat(p)
		return err == nil && st.IsDir()
	}
	var out []Cache
	for _, c := range caches {
		var layers []string
		for _, l := range append([]string{c.Host}, c.Lower...) {
			if isDir(l) {
				layers = append(layers, l)
			}
		}
		if len(layers) == 0 {
			continue
		}
		// A user who never built has no build cache of their own; the
		// layers beneath it (the harness's warm cache) still count.
		c.Host, c.Lower = layers[0], layers[1:]
		out = append(out, c)
	}
	return out
}

// Merged returns the host directory holding the whole workspace when it
// is a copy, or "" for an overlay (whose merged view exists only in the
// box).
func (b *Box) Merged() string { return b.copyDir }

// Close is the kill switch: it kills the box's init process, which takes
// every process in the box's PID namespace with it, then removes the
// box's cgroups. It is safe to call more than once.
func (b *Box) Close() error {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil
	}
	b.closed = true
	b.mu.Unlock()
	tr := newTracer("close")
	errs := []error{b.stop()}
	tr.mark("stop")
	_ = b.awaitDisk() // a box that failed to start may still be making it
	if b.disk != nil && b.disk.image == "" && b.disk.mnt != nil && !b.discarding {
		errs = append(errs, b.disk.save(b.opts.StateDir))
	}
	tr.mark("save")
	releaseLater(b.deadNS, b.disk)
	b.deadNS = nil
	tr.mark("disk.close")
	if b.audit != nil {
		errs = append(errs, b.audit.close())
	}
	_ = os.RemoveAll(filepath.Join(b.opts.StateDir, "root"))
	tr.mark("rest")
	return errors.Join(errs...)
}

// lockedWriter collects init's stderr for error messages.
type lockedWriter struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.b.Len() > 64<<10 {
		return len(p), nil
	}
	return l.b.Write(p)
}

func (l *lockedWriter) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// hostEnv looks a variable up in the harness environment.
func hostEnv(k string) (string, bool) { return os.LookupEnv(k) }

// withDefaults fills in the defaults documented on Limits.
func (l Limits) withDefaults() Limits {
	if l.Timeout <= 0 {
		l.Timeout = 10 * time.Minute
	}
	if l.OutputBytes <= 0 {
		l.OutputBytes = 1 << 20
	}
	if l.MemoryBytes <= 0 {
		l.MemoryBytes = 4 << 30
	}
	if l.Pids <= 0 {
		l.Pids = 512
	}
	if l.DiskBytes <= 0 {
		l.DiskBytes = DefaultDiskBytes
	}
	return l
}
