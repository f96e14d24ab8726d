//go:build linux

package sandbox

import (
	"context"
	"runtime"
	"sync"

	"golang.org/x/sys/unix"
)

// The pool of pre-started inits (zygotes).
//
// Most of a box's start was not building the box but getting a process
// to build it: forking the harness into seven new namespaces, exec of
// the harness binary and its Go runtime's start, and moving the process
// into the box's cgroups (on cgroup v1, two migrations, each waiting for
// an RCU grace period). None of it depends on what the box is for. So
// each box's Start leaves one init started ahead for the next: spawned as
// a box's init always is (namespaces, uid maps, cgroups with the limits
// of the box that asked, its control and disk sockets) and then waiting,
// before doing anything, for its setup on its socket. Start takes it and
// goes on exactly as with an init it had just started: the setup, the
// disk, the mounts, Landlock, seccomp and the command threads all happen
// after the take, for this box alone.
//
// A zygote serves one box and dies with it: it has run no command and
// seen no setup when it is taken, so nothing of a previous box can reach
// a later one through it. It is in no box's namespaces, and only the
// harness holds the other end of its sockets (close-on-exec), so no
// box's code can reach it. It is used only if nothing it was made from
// has changed since: the same cgroup limits and uid maps (or it is
// thrown away), and the same mount table (it copied the harness's as it
// was forked; a mount or unmount on the host since marks the harness's
// open /proc/thread-self/mountinfo, and such a zygote is thrown away
// too). An init that fails after the take fails that box's Start, as one
// started then would.
//
// Cost: one idle process, its cgroups and a disk (see diskpool_linux.go)
// per harness that has started a box, and the work of one init's start
// per box, begun when the box that took the last one is built (its Start
// returns) and done while that box runs. Begun at the take, that work
// (a fork and exec, the new init's Go start and its prepared root, the
// disk's copy) ran beside the box's own build on this 2-core machine:
// by trace at load 7, a start from a ready spare took 25-30 ms with it
// and 9-12 ms without (issue 25). A take that finds the next one not yet
// begun (another box is still being built) begins it at once, and a
// Start that finds it still being made waits for it: it is further on
// than one started then. It dies with the harness
// (Pdeathsig); the next harness sweeps its empty cgroups and its image.

// pooledFor reports whether a box of o starts from the pool.
func pooledFor(o Options) bool {
	return o.Policy.Isolation != "none" && (o.Seed == "" || o.Snapshot != "" && !o.NoOverlay)
}

// boxFor returns the Box that Start fills in for o: one whose init was
// started ahead when the pool has one for it, else a new one. Start calls
// refill once it has built the box (or failed to), to begin the next
// box's init and disk (see take).
func boxFor(ctx context.Context, o Options) (b *Box, refill func()) {
	if !pooledFor(o) {
		return emptyBox(), func() {}
	}
	b, refill = zygotes.take(ctx, keyOf(o.Policy.Limits.withDefaults(), o.Policy.RootFS == ""))
	if b != nil {
		b.pooled = true
		return b, refill
	}
	return emptyBox(), refill
}

func emptyBox() *Box { return &Box{pending: map[int]pendingCall{}, dead: make(chan struct{})} }

// zygoteKey is what a zygote was made for.
type zygoteKey struct {
	memory, disk int64
	pids         int
	root         bool // rootHarness: the uid maps and setgroups
	// host: the init prepared the host's system directories and /etc
	// entries in its root, for a box without an image (prep_linux.go).
	host bool
}

func keyOf(l Limits, host bool) zygoteKey {
	return zygoteKey{memory: l.MemoryBytes, disk: l.DiskBytes, pids: l.Pids, root: rootHarness(), host: host}
}

// zygote is a started init waiting for its setup.
type zygote struct {
	b   *Box
	key zygoteKey
	// mounts is the forking thread's /proc/thread-self/mountinfo, opened
	// before the fork: a raw fd, never in Go's netpoller, whose epoll
	// would consume the change mark this pool reads.
	mounts int
}

type zygotePool struct {
	mu   sync.Mutex
	next chan *zygote // the one being made, made or to be made; nil when none is
	// begin begins making next, if it has not begun: with true it is
	// made, with false next gets nil (ReleaseSpares). Nil when begun.
	begin func(build bool)
}

// beginNow begins making the next one, if a box's Start deferred it.
// Called with mu held.
func (p *zygotePool) beginNow(build bool) {
	if p.begin != nil {
		p.begin(build)
		p.begin = nil
	}
}

var zygotes zygotePool

// ReleaseSpares throws away the init and disk started ahead for the next
// box, if any (waiting for one being made), so the harness holds no idle
// process or disk until its next Start makes one again. An embedder calls
// it when it stops starting boxes for a while, or to account for every
// process it has.
func ReleaseSpares() {
	zygotes.mu.Lock()
	zygotes.beginNow(false)
	c := zygotes.next
	zygotes.next = nil
	zygotes.mu.Unlock()
	if c == nil {
		return
	}
	if z := <-c; z != nil {
		z.discard()
	}
}

// take returns a pre-started init made for key (waiting for the one
// being made, if any: it is further on than one started now), or nil,
// and refill, which begins making the next one for key. The caller
// calls refill once its box is built, so that the next one's making
// does not compete with the build for the CPUs; a take or ReleaseSpares
// in between begins it, or cancels it, first.
func (p *zygotePool) take(ctx context.Context, key zygoteKey) (*Box, func()) {
	p.mu.Lock()
	// The one a box still being built has not begun yet is wanted now.
	p.beginNow(true)
	c := p.next
	next := make(chan *zygote, 1)
	var once sync.Once
	begin := func(build bool) {
		once.Do(func() {
			if build {
				go p.make(key, next)
			} else {
				next <- nil
			}
		})
	}
	p.next, p.begin = next, begin
	p.mu.Unlock()
	refill := func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		begin(true)
		if p.next == next {
			p.begin = nil
		}
	}
	return p.takeFrom(ctx, c, key), refill
}

// takeFrom waits for the zygote c delivers and returns its box if it is
// one for key and current, else nil.
func (p *zygotePool) takeFrom(ctx context.Context, c chan *zygote, key zygoteKey) *Box {
	if c == nil {
		return nil
	}
	var z *zygote
	select {
	case z = <-c:
	case <-ctx.Done():
		go func() { z := <-c; z.discard() }()
		return nil
	}
	if z == nil {
		return nil
	}
	if z.key != key || !z.current() {
		go z.discard()
		return nil
	}
	unix.Close(z.mounts)
	return z.b
}

// make starts a zygote for key and delivers it on c (nil if it failed:
// the box that takes nothing starts its init itself, and reports why
// that fails).
func (p *zygotePool) make(key zygoteKey, c chan *zygote) {
	z := &zygote{key: key, b: emptyBox(), mounts: -1}
	// The disk is made while init starts, as in a box's Start.
	dc := make(chan *disk, 1)
	go func() {
		// Without a disk made ahead the box makes its own, as it would.
		d, _ := poolDisk(key.disk)
		dc <- d
	}()
	// The fork copies the mount namespace of the thread that forks, and
	// the mark is read on that thread's: the process's may be another
	// (a thread that unshared its own and was never given back, the main
	// thread among them, leaves /proc/self on it).
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var err error
	if z.mounts, err = unix.Open("/proc/thread-self/mountinfo", unix.O_RDONLY|unix.O_CLOEXEC, 0); err != nil {
		z.mounts = -1
	} else {
		z.b.limits = Limits{MemoryBytes: key.memory, Pids: key.pids}
		z.b.prepHost = key.host
		err = z.b.spawn()
	}
	z.b.spareDisk = <-dc
	if err != nil || key.root != rootHarness() {
		z.discard()
		z = nil
	}
	c <- z
}

// current reports whether the zygote's init is alive and the harness's
// mount table unchanged since it was forked.
func (z *zygote) current() bool {
	select {
	case <-z.b.dead:
		return false
	default:
	}
	fds := []unix.PollFd{{Fd: int32(z.mounts), Events: unix.POLLPRI}}
	n, err := unix.Poll(fds, 0)
	return err == nil && n == 0
}

// discard kills a zygote no box will use.
func (z *zygote) discard() {
	if z == nil {
		return
	}
	if z.mounts >= 0 {
		unix.Close(z.mounts)
	}
	_ = z.b.stop()
	releaseLater(z.b.deadNS, nil)
}
