//go:build linux

package sandbox

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// startInit hands the box's init its setup and then its disk, and waits
// for it to report the box built. Init is a pre-started one taken from
// the pool (see zygote_linux.go) or, when there is none, started now.
func (b *Box) startInit(ctx context.Context) error {
	if b.cmd == nil {
		b.prepHost = b.opts.Policy.RootFS == ""
		if err := b.spawn(); err != nil {
			return err
		}
	}
	tr := newTracer("startInit")
	s, err := b.newSetup()
	if err != nil {
		return err
	}
	tr.mark("newSetup")
	s.CgroupV1 = !b.cg.v2
	req := &request{Setup: s}
	ch, err := b.send(req, &streamed{})
	if err != nil {
		return err
	}
	diskSock := b.diskSock
	b.diskSock = nil
	tr.mark("send")
	if err := b.handDisk(diskSock, s.Upper); err != nil {
		return err
	}
	tr.mark("handDisk")
	resp, err := b.await(ctx, req.ID, ch, 30*time.Second)
	tr.mark("await-init")
	if traceOn {
		fmt.Fprint(os.Stderr, b.initLog.String())
	}
	if err != nil {
		return err
	}
	if resp.Error != "" {
		return fmt.Errorf("%w: %s", ErrUnavailable, resp.Error)
	}
	b.layers = append([]string{"user, mount, PID, network, IPC, UTS and cgroup namespaces"}, resp.Layers...)
	b.layers = append(b.layers, b.cg.describe())
	return nil
}

// spawn starts init in new namespaces and the box's cgroups, where it
// prepares the part of the root no option changes and waits for its
// setup. It needs only b.limits and b.prepHost: nothing else of the
// box's options reaches init before its setup.
func (b *Box) spawn() error {
	sock, child, err := newChannel()
	if err != nil {
		return err
	}
	b.sock = sock
	defer child.Close()
	// Init mounts its root here before its setup (see prep_linux.go).
	if err := os.MkdirAll(boxRoot(), 0o755); err != nil {
		return err
	}
	cg, err := newCgroups(b.limits)
	if err != nil {
		return fmt.Errorf("%w: resource limits: %w", ErrUnavailable, err)
	}
	b.cg = cg
	// init moves each command into the commands' cgroup through this fd.
	procs, err := os.OpenFile(cg.cmdProcs, os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("%w: resource limits: %w", ErrUnavailable, err)
	}
	defer procs.Close()
	// On cgroup v1 each command thread joins the commands' cgroup before
	// it forks (through this fd), so no child is ever born outside it.
	// (and the commands' memory cgroup, which they leave again once the
	// command has started: see commandMemory).
	tasks := []*os.File{procs, procs, procs}
	if !cg.v2 {
		for i, p := range []string{filepath.Join(filepath.Dir(cg.cmdProcs), "tasks"), cg.cmdMemTasks, cg.memTasks} {
			if tasks[i], err = os.OpenFile(p, os.O_WRONLY, 0); err != nil {
				return fmt.Errorf("%w: resource limits: %w", ErrUnavailable, err)
			}
			defer tasks[i].Close()
		}
	}
	diskSock, diskChild, err := newDiskSocket()
	if err != nil {
		return err
	}
	b.diskSock = diskSock
	defer diskChild.Close()
	// fds 3, 4, diskFD, tasksFD…
	return b.spawnInit(append([]*os.File{child, procs, diskChild}, tasks...))
}

// boxRoot is where every init mounts the tmpfs that becomes its root.
// Each does so in its own private mount namespace, so one empty
// directory serves them all: making one per box (and removing it at
// close) cost the host's ext4 an inode each time, about a millisecond of
// a box's start by perf at this machine's rate of boxes.
func boxRoot() string { return filepath.Join(DefaultCacheDir(), "box-root") }

// boxDisk is where every init attaches its disk while it builds the box,
// each in its own mount namespace like boxRoot.
func boxDisk() string { return filepath.Join(DefaultCacheDir(), "box-disk") }

// newSetup is what init is told to build.
func (b *Box) newSetup() (*setup, error) {
	// Relative paths are on the box's disk (see attachDisk).
	s := &setup{Root: boxRoot(), Disk: boxDisk(), Workspace: b.opts.Workspace,
		ReadOnly: b.opts.Policy.ReadOnly, GitRO: true, CacheDir: diskCaches, NestedUser: !rootHarness(),
		RootFS: b.opts.Policy.RootFS}
	if b.copyDir != "" {
		s.Workspace = diskCopy
	}
	s.Caches = presentCaches(b.opts.Policy.Caches)
	b.caches = s.Caches
	if err := os.MkdirAll(s.Disk, 0o700); err != nil {
		return nil, err
	}
	if b.opts.Snapshot != "" && b.copyDir == "" {
		s.Lower, s.Upper, s.OvlWork = b.opts.Snapshot, diskUpper, diskOvlWork
		s.Layers = snapshotLayers(b.opts.Snapshot)
	}
	ws := b.opts.Workspace
	if s.Lower != "" {
		ws = s.Lower
	}
	if err := handOver(ws); err != nil {
		return nil, err
	}
	if b.opts.Snapshot != "" {
		s.Objects = storeObjects(b.opts.Snapshot)
	} else {
		s.Objects = storeObjects(b.opts.Workspace)
	}
	if b.opts.Policy.Network == NetworkAllowlist {
		if b.opts.ProxySocket == "" {
			return nil, fmt.Errorf("%w: network allowlist needs the harness proxy, and none is running", ErrUnavailable)
		}
		s.ProxySock = b.opts.ProxySocket
	}
	return s, nil
}

// spawnInit starts init in new namespaces with files as its fds 3 on and
// moves it into the box's cgroups.
func (b *Box) spawnInit(files []*os.File) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	b.cmd = exec.Command(self)
	b.cmd.Args = []string{"sandgate-box-init"}
	prep := "image"
	if b.prepHost {
		prep = "host"
	}
	nested := "0"
	if !rootHarness() {
		nested = "1" // as newSetup's NestedUser
	}
	b.cmd.Env = []string{roleEnv + "=init", prepEnv + "=" + prep, prepRootEnv + "=" + boxRoot(), prepNestedEnv + "=" + nested}
	if traceOn {
		b.cmd.Env = append(b.cmd.Env, "SANDGATE_BOX_TRACE=1")
	}
	b.cmd.ExtraFiles = files
	b.initLog = &lockedWriter{}
	b.cmd.Stderr = b.initLog
	uids, gids := boxIDMaps()
	b.cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags: unix.CLONE_NEWUSER | unix.CLONE_NEWNS | unix.CLONE_NEWPID | unix.CLONE_NEWNET |
			unix.CLONE_NEWIPC | unix.CLONE_NEWUTS | unix.CLONE_NEWCGROUP,
		UidMappings: uids, GidMappings: gids,
		// Init drops the commands' supplementary groups; only a privileged
		// harness may allow setgroups in the box.
		GidMappingsEnableSetgroups: rootHarness(),
		Pdeathsig:                  syscall.SIGKILL,
	}
	if err := b.cmd.Start(); err != nil {
		return fmt.Errorf("%w: cannot create namespaces: %w (user namespaces may be disabled: check /proc/sys/user/max_user_namespaces)", ErrUnavailable, err)
	}
	b.holdMountNS()
	if err := b.cg.add(b.cmd.Process.Pid); err != nil {
		return fmt.Errorf("%w: resource limits: %w", ErrUnavailable, err)
	}
	b.enc = json.NewEncoder(b.sock)
	go b.readLoop()
	return nil
}
