//go:build linux

package sandbox

import (
	"fmt"

	seccomp "github.com/elastic/go-seccomp-bpf"
	"github.com/landlock-lsm/go-landlock/landlock"
	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// landlockABI returns the kernel's Landlock ABI version, 0 if absent.
func landlockABI() int {
	v, err := llsys.LandlockGetABIVersion()
	if err != nil {
		return 0
	}
	return v
}

// lockDown applies the second and third layers to init (and so to every
// command it starts): Landlock limits writes to the workspace and scratch
// directories, and a seccomp filter blocks what a build never needs.
// prepared is the seccomp programs init assembled before its setup (nil
// for none; see lockprep_linux.go).
func lockDown(nestedUser bool, prepared *seccompProgs) ([]string, error) {
	abi := landlockABI()
	if abi < 1 {
		return nil, fmt.Errorf("%w: Landlock is not enabled in this kernel (need Linux 5.13+ with lsm=landlock)", ErrUnavailable)
	}
	itr.mark("abi")
	if err := restrictAllThreads(fsRules(nestedUser)); err != nil {
		return nil, fmt.Errorf("%w: landlock: %w", ErrUnavailable, err)
	}
	itr.mark("landlock")
	layers := []string{fmt.Sprintf("landlock ABI %d (writes only to /work, /tmp, %s)", abi, HomeDir)}
	// Landlock's signal and abstract-socket scopes are left off: before
	// ABI 8 each thread of a Go process gets its own sibling domain, so a
	// command started from one thread could not be killed from another.
	// The box's own PID and network namespaces already confine both.
	progs, err := seccompFor(prepared, nestedUser)
	if err != nil {
		return nil, fmt.Errorf("%w: seccomp: %w", ErrUnavailable, err)
	}
	itr.mark("filter")
	if err := progs.load(); err != nil {
		return nil, fmt.Errorf("%w: seccomp: %w", ErrUnavailable, err)
	}
	layers = append(layers, "no_new_privs", "seccomp (no mount, namespaces, ptrace, pidfd_open/getfd, process_vm, io_uring, bpf, keyrings, module loading, vsock; in every ABI the kernel takes)")
	return layers, nil
}

// restrictAllThreads puts every thread of init in one Landlock domain of
// rules. The version is pinned to what the kernel has, so nothing is
// silently downgraded below it; BestEffort only drops rights newer than
// the kernel's ABI.
//
// go-landlock's RestrictPaths first sets no_new_privs on every thread
// and then enforces the ruleset on every thread: before ABI 8 each is a
// round of signals to all of the Go runtime's threads, which wait for
// each other (by trace 6-12 ms of a box's start on this 2-core machine).
// Init is root in its user namespace, and CAP_SYS_ADMIN there is what
// landlock_restrict_self asks for instead of no_new_privs, so one round
// enforces the ruleset; the seccomp filter loaded next, before any
// command runs, sets no_new_privs on every thread (TSYNC does).
func restrictAllThreads(rules []landlock.Rule) error {
	// Filesystem rights only, as RestrictPaths restricts: V7 as a whole
	// also handles TCP bind/connect and the signal and abstract-socket
	// scopes, which would deny every command loopback and the proxy, and
	// init's kill of a command (see lockDown).
	fd, flags, err := landlock.Config{HandledAccessFS: landlock.V7.HandledAccessFS}.BestEffort().NewRulesetFD(rules...)
	if err != nil {
		return err
	}
	if fd < 0 {
		return fmt.Errorf("no ruleset to enforce")
	}
	defer unix.Close(fd)
	// The round's wake-ups stay on this CPU (see pin_linux.go).
	pinned := pinToThisCPU()
	itr.mark("ruleset+pin")
	err = llsys.AllThreadsLandlockRestrictSelf(fd, flags)
	if rerr := pinned.restore(); err == nil {
		err = rerr
	}
	return err
}

// fsRules are the filesystem rules of init's domain and of the commands'
// nested ones. With a user namespace per command, the thread that forks a
// command writes its uid_map and gid_map under /proc, so /proc files are
// writable there (as every rootless sandbox's are; /proc/sys is a
// read-only mount, and a command's uid is the harness's, not root).
func fsRules(nestedUser bool) []landlock.Rule {
	rules := []landlock.Rule{
		landlock.RODirs("/"),
		landlock.RWDirs(WorkDir, TmpDir, HomeDir, "/dev/shm"),
		landlock.RWFiles("/dev/null", "/dev/zero", "/dev/full", "/dev/tty").IgnoreIfMissing(),
	}
	if nestedUser {
		rules = append(rules, landlock.PathAccess(llsys.AccessFSWriteFile, "/proc"))
	}
	return rules
}

// nsFlags are the namespace-creating clone flags a command may not use;
// CLONE_NEWPID stays allowed because init starts every command in its own
// PID namespace (a command without capabilities cannot use it), and so
// does CLONE_NEWUSER when commands get a user namespace of their own.
func nsFlags(nestedUser bool) uint64 {
	f := uint64(unix.CLONE_NEWUSER | unix.CLONE_NEWNS | unix.CLONE_NEWNET | unix.CLONE_NEWIPC |
		unix.CLONE_NEWUTS | unix.CLONE_NEWCGROUP | unix.CLONE_NEWTIME)
	if nestedUser {
		f &^= unix.CLONE_NEWUSER
	}
	return f
}

// deniedSyscalls fail with EPERM in the box, whichever ABI they come
// through (see compatFilter).
var deniedSyscalls = []string{
	"mount", "umount2", "pivot_root", "chroot", "move_mount", "open_tree", "open_tree_attr", "fsopen", "fsmount", "fsconfig", "fspick",
	"mount_setattr", "unshare", "setns", "ptrace", "process_vm_readv", "process_vm_writev",
	"bpf", "keyctl", "add_key", "request_key", "perf_event_open", "userfaultfd",
	"kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module",
	"swapon", "swapoff", "reboot", "acct", "quotactl", "open_by_handle_at", "name_to_handle_at",
	"lookup_dcookie", "syslog", "iopl", "ioperm",
	"pidfd_open", "pidfd_getfd", "kcmp", "io_uring_setup", "io_uring_enter", "io_uring_register",
}

// seccompFilter is loaded into init and inherited by every command. Go's
// os/exec falls back to plain wait and kill when pidfd_open fails. It
// sees only the native ABI's calls (compatFilter has the others'), and
// refuses AF_VSOCK sockets: vsock is not in the box's network namespace
// (it reaches the VM's host and the host's own listeners), so it would
// be a way out past the allowlist on any virtual machine that has it.
// This library compares all 64 bits of the family, which the kernel
// reads as an int: compatFilter checks the low half, which holds.
// (seccompProgs.load sets no_new_privs and loads it into every thread.)
func seccompFilter(nestedUser bool) *seccomp.Policy {
	return &seccomp.Policy{
		DefaultAction: seccomp.ActionAllow,
		Syscalls: []seccomp.SyscallGroup{
			{Action: seccomp.ActionErrno, Names: deniedSyscalls},
			{Action: seccomp.ActionErrno, NamesWithCondtions: []seccomp.NameWithConditions{
				{Name: "clone", Conditions: seccomp.ArgumentConditions{{Argument: 0, Operation: seccomp.BitsSet, Value: nsFlags(nestedUser)}}},
				{Name: "socket", Conditions: seccomp.ArgumentConditions{{Argument: 0, Operation: seccomp.Equal, Value: unix.AF_VSOCK}}},
			}},
			// clone3 passes its flags in memory a filter cannot read; ENOSYS
			// makes libc fall back to clone, which is checked above.
			{Action: seccomp.ActionErrno | seccomp.Action(unix.ENOSYS), Names: []string{"clone3"}},
		},
	}
}
