//go:build linux

package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"sync"

	"github.com/landlock-lsm/go-landlock/landlock"
	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// Each command is started from an OS thread of its own, set apart for it
// for as long as it runs: a child inherits the credentials of the thread
// that forks it, and Linux keeps capabilities and Landlock domains per
// thread. That thread drops its capability bounding set and enters a
// Landlock domain nested under init's that scopes signals and abstract
// unix sockets. Every command therefore has a domain of its own, a
// sibling of every other command's: it cannot signal, trace (pidfd_getfd,
// /proc/PID/mem, /proc/PID/fd) or even see (hidepid) init or a command of
// another node, whatever uid they share. The rest of init keeps its
// capabilities.

// startSpawner checks that a command thread can be set up and makes init
// undumpable (its /proc files then belong to root and no command can open
// them).
func startSpawner(nestedUser bool) ([]string, error) {
	layers, err := onCommandThread(nestedUser, func() error { return nil })
	if err != nil {
		return nil, err
	}
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return nil, fmt.Errorf("%w: make init undumpable: %w", ErrUnavailable, err)
	}
	return append(layers, "init undumpable; its control socket close-on-exec"), nil
}

// runOnThread starts cmd from a command thread and waits for it there
// (the thread must outlive the command: Pdeathsig fires when it ends).
func runOnThread(cmd *exec.Cmd) (startErr, waitErr error) {
	_, startErr = onCommandThread(nestedUser, func() error {
		tid := []byte(strconv.Itoa(unix.Gettid()))
		if cgroupV1 {
			for _, f := range []*os.File{cmdTasks, cmdMemTasks} {
				if _, err := unix.Pwrite(int(f.Fd()), tid, 0); err != nil {
					return fmt.Errorf("move the command thread into the commands' cgroup: %w", err)
				}
			}
		}
		err := startInCgroup(cmd)
		if cgroupV1 {
			// Back to init's memory cgroup, so an OOM among the commands
			// can never choose init.
			if _, merr := unix.Pwrite(int(memTasks.Fd()), tid, 0); merr != nil && err == nil {
				_ = cmd.Process.Kill()
				_ = cmd.Wait()
				err = fmt.Errorf("move the command thread back to init's memory cgroup: %w", merr)
			}
		}
		if err != nil {
			return err
		}
		waitErr = cmd.Wait()
		return nil
	})
	return startErr, waitErr
}

// onCommandThread runs f on a fresh locked OS thread restricted for
// commands; the thread ends with f.
func onCommandThread(nestedUser bool, f func() error) ([]string, error) {
	type result struct {
		layers []string
		err    error
	}
	done := make(chan result, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread dies with the goroutine
		l, err := restrictCommandThread(nestedUser)
		if err == nil {
			err = f()
		}
		done <- result{l, err}
	}()
	r := <-done
	return r.layers, r.err
}

// restrictCommandThread drops the bounding set and enters a new nested
// Landlock domain on the calling (locked) thread only.
func restrictCommandThread(nestedUser bool) ([]string, error) {
	for c := 0; c <= unix.CAP_LAST_CAP; c++ {
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil && err != unix.EINVAL {
			return nil, fmt.Errorf("%w: drop capability %d from the bounding set: %w", ErrUnavailable, c, err)
		}
	}
	r, err := commandRuleset(nestedUser)
	if err != nil {
		return nil, err
	}
	// Every call makes a new domain, so one ruleset serves every command.
	if err := llsys.LandlockRestrictSelf(r.fd, r.flags); err != nil {
		return nil, fmt.Errorf("%w: enter the commands' landlock domain: %w", ErrUnavailable, err)
	}
	scope := "signals and abstract sockets scoped to the command's domain"
	if r.abi < 6 {
		scope = "no signal scoping before ABI 6; init is another uid"
	}
	return []string{"commands: uid 1000, no capabilities (bounding set empty), each in a landlock domain of its own nested under init's (" + scope + ")"}, nil
}

// ruleset is the commands' Landlock ruleset, built once per box.
type ruleset struct {
	fd    int
	flags uint32
	abi   int
	err   error
}

var (
	cmdRulesetOnce sync.Once
	cmdRuleset     ruleset
)

func commandRuleset(nestedUser bool) (ruleset, error) {
	cmdRulesetOnce.Do(func() {
		r := &cmdRuleset
		r.abi = landlockABI()
		if r.abi < 6 && nestedUser {
			// Without a second uid, only Landlock's scopes keep a command
			// from signalling init.
			r.err = fmt.Errorf("%w: a harness that is not root needs Landlock ABI 6 (Linux 6.12) to fence commands off from init; this kernel has ABI %d", ErrUnavailable, r.abi)
			return
		}
		cfg := landlock.Config{HandledAccessFS: landlock.V7.HandledAccessFS, Scoped: landlock.V7.Scoped}.BestEffort()
		if r.fd, r.flags, r.err = cfg.NewRulesetFD(fsRules()...); r.err != nil {
			r.err = fmt.Errorf("%w: commands' landlock domain: %w", ErrUnavailable, r.err)
		}
	})
	return cmdRuleset, cmdRuleset.err
}
