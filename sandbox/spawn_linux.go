//go:build linux

package sandbox

import (
	"fmt"
	"os/exec"
	"runtime"
	"strconv"
	"sync"

	"github.com/landlock-lsm/go-landlock/landlock"
	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// Each command is started from an OS thread set apart for it for as long
// as it runs: a child inherits the credentials of the thread that forks
// it, and Linux keeps capabilities and Landlock domains per thread. That
// thread drops its capability bounding set, sits in the commands' pids
// cgroup and, for every command, enters a new Landlock domain nested under
// the one it had, scoping signals and abstract unix sockets. Every command
// therefore has a domain of its own, never an ancestor of a running
// command's: it cannot signal, trace (pidfd_getfd, /proc/PID/mem,
// /proc/PID/fd) or even see (hidepid) init or a command of another node,
// whatever uid they share. The rest of init keeps its capabilities.
//
// A thread serves up to threadUses commands one after another (creating a
// thread and moving it between cgroups is most of a command's overhead).
// Its domains nest one level per command, and the commands that ran in
// the outer ones are all dead: a command's wait returns only once its
// whole PID namespace is gone. Landlock allows 16 levels; init uses one.
// Threads the Go runtime creates are cloned from a template thread, never
// from a locked one, so no other thread inherits a command's domain.
const threadUses = 10

// idleThreads hands a waiting command thread its next job.
var idleThreads = make(chan chan threadJob, 4)

type threadJob struct {
	f    func() error
	done chan error
}

// startSpawner checks that a command thread can be set up and makes init
// undumpable (its /proc files then belong to root and no command can open
// them).
func startSpawner(nestedUser bool) ([]string, error) {
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread dies with the goroutine
		done <- restrictCommandThread(nestedUser, true)
	}()
	if err := <-done; err != nil {
		return nil, err
	}
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return nil, fmt.Errorf("%w: make init undumpable: %w", ErrUnavailable, err)
	}
	scope := "signals and abstract sockets scoped to the command's domain"
	if cmdRuleset.abi < 6 {
		scope = "no signal scoping before ABI 6; init is another uid"
	}
	caps := "no capabilities (bounding set empty)"
	if nestedUser {
		// A new user namespace gives its first process a full bounding set;
		// the command still has no capabilities and no_new_privs.
		caps = "no capabilities (in a user namespace of its own)"
	}
	return []string{"commands: uid 1000, " + caps + ", each in a landlock domain of its own nested under init's (" + scope + ")",
		"init undumpable; its control socket close-on-exec"}, nil
}

// runOnThread starts cmd from a command thread and waits for it there
// (the thread must outlive the command: Pdeathsig fires when it ends).
func runOnThread(cmd *exec.Cmd) (startErr, waitErr error) {
	job := threadJob{done: make(chan error, 1), f: func() error {
		tid := []byte(strconv.Itoa(unix.Gettid()))
		if cgroupV1 {
			if _, err := unix.Pwrite(int(cmdMemTasks.Fd()), tid, 0); err != nil {
				return fmt.Errorf("move the command thread into the commands' memory cgroup: %w", err)
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
	}}
	select {
	case inbox := <-idleThreads:
		inbox <- job
	default:
		go commandThread(job)
	}
	// Received first, then read: in one return statement the spec orders
	// the receive but not the variable's read against it.
	err := <-job.done
	return err, waitErr
}

// commandThread runs jobs on one locked OS thread, each in a new domain,
// and offers itself for the next until it has served threadUses.
func commandThread(job threadJob) {
	runtime.LockOSThread() // never unlocked: the thread dies with the goroutine
	if cgroupV1 {
		// Children are born in the commands' pids cgroup, never outside.
		tid := []byte(strconv.Itoa(unix.Gettid()))
		if _, err := unix.Pwrite(int(cmdTasks.Fd()), tid, 0); err != nil {
			job.done <- fmt.Errorf("move the command thread into the commands' cgroup: %w", err)
			return
		}
	}
	inbox := make(chan threadJob)
	for uses := 0; ; uses++ {
		err := restrictCommandThread(nestedUser, uses == 0)
		if err == nil {
			err = job.f()
		}
		job.done <- err
		if err != nil || uses+1 >= threadUses {
			return
		}
		select {
		case idleThreads <- inbox:
		default:
			return
		}
		job = <-inbox
	}
}

// restrictCommandThread drops the bounding set (on a thread's first use)
// and enters a new nested Landlock domain on the calling (locked) thread
// only.
func restrictCommandThread(nestedUser, first bool) error {
	for c := 0; first && c <= unix.CAP_LAST_CAP; c++ {
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil && err != unix.EINVAL {
			return fmt.Errorf("%w: drop capability %d from the bounding set: %w", ErrUnavailable, c, err)
		}
	}
	r, err := commandRuleset(nestedUser)
	if err != nil {
		return err
	}
	// Every call makes a new domain, so one ruleset serves every command.
	if err := llsys.LandlockRestrictSelf(r.fd, r.flags); err != nil {
		return fmt.Errorf("%w: enter the commands' landlock domain: %w", ErrUnavailable, err)
	}
	return nil
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
		if r.fd, r.flags, r.err = cfg.NewRulesetFD(fsRules(nestedUser)...); r.err != nil {
			r.err = fmt.Errorf("%w: commands' landlock domain: %w", ErrUnavailable, r.err)
		}
	})
	return cmdRuleset, cmdRuleset.err
}
