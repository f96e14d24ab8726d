//go:build linux

package sandbox

import (
	"encoding/binary"
	"fmt"
	"runtime"

	"github.com/elastic/go-seccomp-bpf/arch"
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// The seccomp filter's other ABIs.
//
// A 64-bit x86 process may call the kernel through the i386 ABI too
// (int $0x80, or any 32-bit program the box runs), and an arm64 kernel
// runs 32-bit ARM programs: the kernel tags such a call with that ABI's
// audit architecture and numbers it that ABI's way. seccompFilter's
// library compares the architecture first and gives a call of any other
// its default action, allow: through the 32-bit ABI, every call it
// denies (unshare, mount, io_uring, bpf, ptrace…) went through. So init
// loads this second filter beside it (the kernel runs both; the stricter
// answer wins): the 32-bit ABI's calls it checks against the same list
// by that ABI's numbers (32-bit programs, such as GOARCH=386 tests, still
// run), and any other architecture's it refuses.
//
// AF_VSOCK, every way a socket is made:
//   - natively, socket's family is an int: the kernel drops the upper
//     half of the register, which seccompFilter's library compares too
//     (socket(1<<32|AF_VSOCK) passed it), so this filter compares the
//     low half alone;
//   - through the 32-bit ABI, the direct socket call (i386 since Linux
//     4.3) is checked the same way;
//   - a 32-bit socketcall(2) hides its arguments, the family among them,
//     in memory no filter can read: it is refused with ENOSYS, whatever
//     it asks. musl tries the direct calls first; a 32-bit glibc built
//     for kernels before 4.3 (Debian's i386) and Go's 386 runtime make
//     sockets only through socketcall, so such programs run in a box
//     without sockets (TestSeccompCoversEveryABI).

// compatArch is the 32-bit ABI a process of this architecture may call
// the kernel through, nil for none.
func compatArch() *arch.Info {
	switch runtime.GOARCH {
	case "amd64":
		return arch.I386
	case "arm64":
		return arch.ARM
	}
	return nil
}

// seccompData's offsets (struct seccomp_data): the call's number, its
// audit architecture and the low half of its first argument (a 64-bit
// word in the host's byte order): all a 32-bit ABI has, and all the
// kernel reads of an int.
const (
	seccompNr   = 0
	seccompArch = 4
)

var seccompArg0 = func() uint32 {
	if binary.NativeEndian.Uint16([]byte{1, 0}) == 1 {
		return 16
	}
	return 20
}()

const (
	retAllow  = unix.SECCOMP_RET_ALLOW
	retEPERM  = unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)
	retENOSYS = unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS)
)

// compatFilter builds the second filter for native (this process's
// architecture) and compat (its 32-bit ABI, or nil).
func compatFilter(native, compat *arch.Info, nestedUser bool) ([]bpf.Instruction, error) {
	nativeCalls := []bpf.Instruction{bpf.LoadAbsolute{Off: seccompNr, Size: 4}}
	nativeCalls = append(nativeCalls, refuseVsock(native)...)
	nativeCalls = append(nativeCalls, bpf.RetConstant{Val: retAllow})
	prog := []bpf.Instruction{
		bpf.LoadAbsolute{Off: seccompArch, Size: 4},
		bpf.JumpIf{Cond: bpf.JumpNotEqual, Val: uint32(native.ID), SkipTrue: uint8(len(nativeCalls))},
	}
	prog = append(prog, nativeCalls...)
	if compat == nil {
		return append(prog, bpf.RetConstant{Val: retENOSYS}), nil
	}
	prog = append(prog,
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: uint32(compat.ID), SkipTrue: 1},
		bpf.RetConstant{Val: retENOSYS},
		bpf.LoadAbsolute{Off: seccompNr, Size: 4})
	// Each denied call jumps to the EPERM at the end.
	var deny []int
	for _, name := range deniedSyscalls {
		if nr, ok := compat.SyscallNames[name]; ok { // a call the ABI lacks cannot be made
			deny = append(deny, len(prog))
			prog = append(prog, bpf.JumpIf{Cond: bpf.JumpEqual, Val: uint32(nr)})
		}
	}
	// clone3's flags and socketcall's arguments are in memory: ENOSYS
	// sends libc back to clone, and leaves 32-bit programs the direct
	// socket calls (see above).
	for _, name := range []string{"clone3", "socketcall"} {
		if nr, ok := compat.SyscallNames[name]; ok {
			prog = append(prog, bpf.JumpIf{Cond: bpf.JumpNotEqual, Val: uint32(nr), SkipTrue: 1}, bpf.RetConstant{Val: retENOSYS})
		}
	}
	// clone's flags come first in both 32-bit ABIs (CLONE_BACKWARDS).
	if nr, ok := compat.SyscallNames["clone"]; ok {
		prog = append(prog,
			bpf.JumpIf{Cond: bpf.JumpNotEqual, Val: uint32(nr), SkipTrue: 3},
			bpf.LoadAbsolute{Off: seccompArg0, Size: 4},
			bpf.JumpIf{Cond: bpf.JumpBitsSet, Val: uint32(nsFlags(nestedUser)), SkipTrue: 0, SkipFalse: 1},
			bpf.RetConstant{Val: retEPERM},
			bpf.LoadAbsolute{Off: seccompNr, Size: 4})
	}
	prog = append(prog, refuseVsock(compat)...)
	prog = append(prog, bpf.RetConstant{Val: retAllow})
	end := len(prog)
	prog = append(prog, bpf.RetConstant{Val: retEPERM})
	for _, at := range deny {
		skip := end - at - 1
		if skip > 255 {
			return nil, fmt.Errorf("compat filter: %d calls are too many for one jump", len(deny))
		}
		j := prog[at].(bpf.JumpIf)
		j.SkipTrue = uint8(skip)
		prog[at] = j
	}
	return prog, nil
}

// refuseVsock returns EPERM for abi's socket call when the low 32 bits of
// its family (all the kernel reads of an int) are AF_VSOCK. It expects
// the call's number loaded and leaves the family loaded instead; it must
// come last before the filter's answer. An ABI without a socket call
// needs no check.
func refuseVsock(abi *arch.Info) []bpf.Instruction {
	nr, ok := abi.SyscallNames["socket"]
	if !ok {
		return nil
	}
	return []bpf.Instruction{
		bpf.JumpIf{Cond: bpf.JumpNotEqual, Val: uint32(nr), SkipTrue: 3},
		bpf.LoadAbsolute{Off: seccompArg0, Size: 4},
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: unix.AF_VSOCK, SkipTrue: 0, SkipFalse: 1},
		bpf.RetConstant{Val: retEPERM},
	}
}
