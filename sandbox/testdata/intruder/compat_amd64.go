package intruder

import (
	"fmt"
	"os"
	"runtime/debug"
	"syscall"
	"unsafe"
)

func int80(nr, a1, a2, a3, a4, a5 uintptr) uintptr

func cloneExit(flags uintptr) uintptr

// compat calls nr through the i386 ABI; ok is false when the kernel has
// no such ABI (int $0x80 faults: ia32 emulation off).
func compat(nr uintptr, args ...uintptr) (r int32, ok bool) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	a := append(args, 0, 0, 0, 0, 0)
	return int32(int80(nr, a[0], a[1], a[2], a[3], a[4])), true
}

// attackCompat makes, through the i386 ABI, calls the box's seccomp
// filter denies to a 64-bit program; each that succeeds is a breach. A
// filter that checks only the native architecture lets them all through.
func attackCompat() {
	if pid, ok := compat(20 /* getpid */); !ok || int(pid) != os.Getpid() {
		report(false, "no i386 ABI on this kernel (int $0x80: %d, %v)", pid, ok)
		return
	}
	fd, _ := compat(434 /* pidfd_open */, uintptr(os.Getpid()), 0)
	report(fd >= 0, "pidfd_open through the i386 ABI (%d)", fd)
	fd, _ = compat(374 /* userfaultfd */, 1 /* UFFD_USER_MODE_ONLY */)
	report(fd >= 0, "userfaultfd through the i386 ABI (%d)", fd)
	key, _ := compat(288 /* keyctl */, 0 /* KEYCTL_GET_KEYRING_ID */, uintptr(0xfffffffe) /* process keyring */, 1)
	report(key >= 0, "keyctl through the i386 ABI (%d)", key)
	// io_uring_setup's parameters must lie below 4 GiB for a 32-bit call.
	if mem, err := syscall.Mmap(-1, 0, 4096, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON|0x40 /* MAP_32BIT */); err == nil {
		fd, _ = compat(425 /* io_uring_setup */, 1, uintptr(unsafe.Pointer(&mem[0])))
		report(fd >= 0, "io_uring_setup through the i386 ABI (%d)", fd)
	}
	// A user and network namespace of its own: every capability there,
	// and the kernel's network configuration code to attack with them.
	pid := int32(cloneExit(0x10000000 | 0x40000000 | uintptr(syscall.SIGCHLD)))
	if pid > 0 {
		var ws syscall.WaitStatus
		syscall.Wait4(int(pid), &ws, 0, nil)
	}
	report(pid > 0, "clone(CLONE_NEWUSER|CLONE_NEWNET) through the i386 ABI (%s)", errOrPid(pid))
	compatVsock()
	report(false, "i386 ABI calls")
}

// compatVsock opens an AF_VSOCK socket through the i386 ABI both ways a
// 32-bit program can: the direct socket call (359, family in a register)
// and socketcall (102) with SYS_SOCKET, whose arguments (family first)
// are in memory below 4 GiB, where no seccomp filter can read them.
func compatVsock() {
	fd, _ := compat(359 /* socket */, 40 /* AF_VSOCK */, syscall.SOCK_STREAM, 0)
	closeCompat(fd)
	report(fd >= 0, "an AF_VSOCK socket through the i386 ABI's socket (%s)", errOrFd(fd))
	mem, err := syscall.Mmap(-1, 0, 4096, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON|0x40 /* MAP_32BIT */)
	if err != nil {
		report(false, "socketcall through the i386 ABI: no memory below 4 GiB (%v)", err)
		return
	}
	defer syscall.Munmap(mem)
	args := (*[3]uint32)(unsafe.Pointer(&mem[0]))
	*args = [3]uint32{40 /* AF_VSOCK */, syscall.SOCK_STREAM, 0}
	fd, _ = compat(102 /* socketcall */, 1 /* SYS_SOCKET */, uintptr(unsafe.Pointer(&mem[0])))
	closeCompat(fd)
	report(fd >= 0, "an AF_VSOCK socket through the i386 ABI's socketcall(SYS_SOCKET) (%s)", errOrFd(fd))
}

func closeCompat(fd int32) {
	if fd >= 0 {
		syscall.Close(int(fd))
	}
}

func errOrFd(r int32) string {
	if r < 0 {
		return syscall.Errno(-r).Error()
	}
	return fmt.Sprint("fd ", r)
}

func errOrPid(r int32) string {
	if r < 0 {
		return syscall.Errno(-r).Error()
	}
	return fmt.Sprint("pid ", r)
}
