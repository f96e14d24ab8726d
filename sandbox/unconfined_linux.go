//go:build linux

package sandbox

import (
	"context"
	"io"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"
)

// execUnconfined runs a command on the host for Isolation "none": the
// environment is still built from nothing and the whole process group is
// killed on timeout, but nothing else is contained.
func (b *Box) execUnconfined(ctx context.Context, c Command, timeout time.Duration) (*Result, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	dir := b.opts.Workspace
	if c.Dir != "" {
		dir = filepath.Join(dir, c.Dir)
	}
	out := &cappedBuffer{max: b.outputBytes(c)}
	cmd := exec.CommandContext(ctx, c.Args[0], c.Args[1:]...)
	var w io.Writer = out
	if c.Live != nil {
		live := newLiveQueue(c.Live)
		defer live.close()
		w = io.MultiWriter(out, live)
	}
	cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = dir, b.env, w, w
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = time.Second
	start := time.Now()
	err := cmd.Run()
	res := &Result{Duration: time.Since(start), Output: out.buf.Bytes(), Dropped: out.dropped, TimedOut: ctx.Err() == context.DeadlineExceeded}
	classify(res, err)
	return res, nil
}
