//go:build linux

package sandbox

import (
	"fmt"
	"os"
	"strconv"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Init's Landlock domain is entered by every thread of it in one round
// (restrictAllThreads): the Go runtime stops the world, signals each
// other thread and spins until each has made the call. Init's threads
// are asleep by then, spread over the CPUs, so each signal was a wake-up
// on another CPU: on this 2-core virtual machine, under load, 3-8 ms of
// a box's start by trace (issue 25). For that round only, every thread
// of init is moved to the CPU the round starts on, where a woken thread
// runs as soon as the spinning caller yields; each thread then gets its
// own CPU set back. Only where init's threads run changes: the domain,
// and who is in it, do not. A command never starts while a thread is
// pinned (the spawner's threads come after lockdown), and the CPU sets
// are restored before lockdown goes on; a failure to restore fails the
// box, so none runs on one CPU unnoticed.

// pinnedThreads is init's threads moved to one CPU, with their own CPU
// sets to go back to.
type pinnedThreads struct {
	orig  map[int]unix.CPUSet
	owner unix.CPUSet // the calling thread's: for threads made while pinned
}

// pinToThisCPU moves every thread of the process to the CPU the caller
// runs on. It moves none (and returns nil) if it cannot tell its own.
func pinToThisCPU() *pinnedThreads {
	var cpu uint32
	if _, _, e := unix.Syscall(unix.SYS_GETCPU, uintptr(unsafe.Pointer(&cpu)), 0, 0); e != 0 {
		return nil
	}
	p := &pinnedThreads{orig: map[int]unix.CPUSet{}}
	if unix.SchedGetaffinity(0, &p.owner) != nil || !p.owner.IsSet(int(cpu)) {
		return nil
	}
	var one unix.CPUSet
	one.Set(int(cpu))
	for _, tid := range threadIDs() {
		var set unix.CPUSet
		if unix.SchedGetaffinity(tid, &set) != nil {
			continue // gone
		}
		if unix.SchedSetaffinity(tid, &one) == nil {
			p.orig[tid] = set
		}
	}
	return p
}

// restore gives every thread its CPU set back: a thread made while the
// others were pinned inherited the pin, and gets the caller's first set.
// It lists the threads again until a pass finds none left to restore.
func (p *pinnedThreads) restore() error {
	if p == nil {
		return nil
	}
	for pass := 0; pass < 8; pass++ {
		changed := false
		for _, tid := range threadIDs() {
			want, ok := p.orig[tid]
			if !ok {
				want = p.owner
			}
			var set unix.CPUSet
			if unix.SchedGetaffinity(tid, &set) != nil || set == want {
				continue
			}
			if err := unix.SchedSetaffinity(tid, &want); err != nil && err != unix.ESRCH {
				return fmt.Errorf("%w: give init's thread %d its CPUs back: %w", ErrUnavailable, tid, err)
			}
			changed = true
		}
		if !changed {
			return nil
		}
	}
	return fmt.Errorf("%w: init's threads kept changing while their CPUs were given back", ErrUnavailable)
}

// threadIDs lists the process's threads.
func threadIDs() []int {
	ents, _ := os.ReadDir("/proc/self/task")
	ids := make([]int, 0, len(ents))
	for _, e := range ents {
		if tid, err := strconv.Atoi(e.Name()); err == nil {
			ids = append(ids, tid)
		}
	}
	return ids
}
