//go:build linux

package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// cappedBuffer keeps the first max bytes and counts the rest.
type cappedBuffer struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	max     int
	dropped int64
}

func (c *cappedBuffer) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	room := c.max - c.buf.Len()
	if room >= len(p) {
		return c.buf.Write(p)
	}
	if room > 0 {
		c.buf.Write(p[:room])
	}
	c.dropped += int64(len(p) - max(room, 0))
	return len(p), nil
}

// streamWriter keeps a command's output up to max bytes, handing every
// full chunk to emit (the harness) and holding only the rest. emit keeps
// no reference to what it is given: the buffer is reused, and grows to a
// whole chunk at once past smallOutput.
type streamWriter struct {
	mu      sync.Mutex
	buf     []byte
	sent    int
	max     int
	dropped int64
	emit    func([]byte)
}

func (s *streamWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	keep := min(len(p), max(s.max-s.sent-len(s.buf), 0))
	s.dropped += int64(len(p) - keep)
	for q := p[:keep]; len(q) > 0; {
		n := min(len(q), chunkBytes-len(s.buf))
		if len(s.buf)+n > max(cap(s.buf), smallOutput) {
			s.buf = slices.Grow(s.buf, chunkBytes-len(s.buf))
		}
		s.buf, q = append(s.buf, q[:n]...), q[n:]
		if len(s.buf) == chunkBytes {
			s.emit(s.buf)
			s.sent, s.buf = s.sent+len(s.buf), s.buf[:0]
		}
	}
	return len(p), nil
}

// smallOutput is how much output a command's buffer takes before it is
// grown to a whole chunk.
const smallOutput = 64 << 10

// every sends on what the command wrote every d, until stop; stop
// returns once no send is under way, so the final reply comes after the
// last chunk.
func (s *streamWriter) every(d time.Duration) (stop func()) {
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(d)
		defer t.Stop()
		for {
			select {
			case <-quit:
				return
			case <-t.C:
				s.flush()
			}
		}
	}()
	return func() { close(quit); <-done }
}

// flush sends what the command wrote since the last chunk.
func (s *streamWriter) flush() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.buf) > 0 {
		s.emit(s.buf)
		s.sent, s.buf = s.sent+len(s.buf), s.buf[:0]
	}
}

// runCommand runs one command as PID 1 of a new PID namespace: when it
// exits or is killed, the kernel kills everything it started.
func runCommand(parent context.Context, r *execReq, emit func([]byte)) (*Result, error) {
	ctx, cancel := context.WithTimeout(parent, r.Timeout)
	defer cancel()
	cmd, res := newCommand(ctx, r)
	if res != nil {
		return res, nil
	}
	out := &streamWriter{max: r.OutputBytes, emit: emit}
	cmd.Stdout, cmd.Stderr = out, out
	stop := func() {}
	if r.Live {
		stop = out.every(LiveEvery)
	}
	if len(r.Stdin) > 0 {
		cmd.Stdin = bytes.NewReader(r.Stdin)
	}
	start := time.Now()
	err, werr := runOnThread(cmd)
	stop() // before out.buf is read: no send after this one's
	if err != nil {
		return nil, err
	}
	res = &Result{Duration: time.Since(start), Output: out.buf, Dropped: out.dropped}
	if ctx.Err() == context.DeadlineExceeded {
		res.TimedOut = true
	}
	classify(res, werr)
	return res, nil
}

// newCommand prepares a command in its directory with the box's
// confinement, or returns the result of one that cannot start (127).
func newCommand(ctx context.Context, r *execReq) (*exec.Cmd, *Result) {
	if len(r.Args) == 0 {
		return nil, &Result{ExitCode: 127, Output: []byte("empty command\n")}
	}
	dir := r.Dir
	if dir == "" {
		dir = WorkDir
	}
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(WorkDir, dir)
	}
	path, err := lookPath(r.Args[0], r.Env)
	if err != nil {
		return nil, &Result{ExitCode: 127, Output: []byte(err.Error() + "\n")}
	}
	cmd := exec.CommandContext(ctx, path, r.Args[1:]...)
	cmd.Args[0] = r.Args[0]
	cmd.Dir, cmd.Env = dir, r.Env
	cmd.SysProcAttr = commandAttr(nestedUser)
	cmd.Cancel = func() error { return cmd.Process.Kill() }
	cmd.WaitDelay = time.Second
	return cmd, nil
}

// commandAttr starts a command as PID 1 of a new PID namespace, as
// CommandUID with no supplementary groups and (through the setuid away
// from uid 0) no capabilities. Without a second host uid it first enters
// a user namespace of its own, whose CommandUID is the box's uid 0.
func commandAttr(nestedUser bool) *syscall.SysProcAttr {
	a := &syscall.SysProcAttr{Cloneflags: unix.CLONE_NEWPID, Setsid: true, Pdeathsig: syscall.SIGKILL,
		Credential: &syscall.Credential{Uid: CommandUID, Gid: CommandGID, Groups: []uint32{}}}
	if nestedUser {
		a.Cloneflags |= unix.CLONE_NEWUSER
		a.UidMappings = []syscall.SysProcIDMap{{ContainerID: CommandUID, HostID: 0, Size: 1}}
		a.GidMappings = []syscall.SysProcIDMap{{ContainerID: CommandGID, HostID: 0, Size: 1}}
		a.Credential.NoSetGroups = true
	}
	return a
}

// nestedUser and cgroupV1 are the box's Setup values, for init.
var nestedUser, cgroupV1 bool

// On cgroup v1, init's handles on the tasks files of the commands' pids
// and memory cgroups and of the box's memory cgroup.
var cmdTasks, cmdMemTasks, memTasks *os.File

// tasksFD is where init finds cmdTasks (after the disk's diskFD), and the
// two memory handles after it.
const tasksFD = 6

// cmdCgroup is init's handle on the commands' cgroup.procs (fd 4).
var cmdCgroup *os.File

// startInCgroup starts a command in the commands' cgroup, whose process
// limit leaves init room to work. On v1 the command thread joined it
// before forking; on v2 the command is moved right after it starts, and
// one that cannot be placed there is killed rather than run outside its
// limit.
func startInCgroup(cmd *exec.Cmd) error {
	if err := cmd.Start(); err != nil {
		return err
	}
	if cgroupV1 {
		return nil // born in the commands' cgroups: its thread joined them
	}
	if _, err := unix.Pwrite(int(cmdCgroup.Fd()), []byte(strconv.Itoa(cmd.Process.Pid)), 0); err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return fmt.Errorf("move the command into its cgroup: %w", err)
	}
	return nil
}

// classify fills a result's exit code and signal from cmd.Run's error.
func classify(res *Result, err error) {
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		res.ExitCode = ee.ExitCode()
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			res.Signal, res.ExitCode = ws.Signal().String(), 128+int(ws.Signal())
		}
	case errors.Is(err, exec.ErrWaitDelay):
		// The command exited; something it left holding the output pipe was
		// killed with its namespace.
	default:
		res.ExitCode = 126
		res.Output = append(res.Output, []byte(err.Error()+"\n")...)
	}
}

// lookPath resolves a command against the box's PATH, not init's.
func lookPath(name string, env []string) (string, error) {
	if strings.Contains(name, "/") {
		return name, nil
	}
	path := basePath
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			path = v
		}
	}
	for _, d := range filepath.SplitList(path) {
		p := filepath.Join(d, name)
		if err := unix.Access(p, unix.X_OK); err == nil {
			return p, nil
		}
	}
	return "", errors.New(name + ": command not found")
}
