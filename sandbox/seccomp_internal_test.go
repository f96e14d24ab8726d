//go:build linux

package sandbox

import (
	"encoding/binary"
	"testing"

	"github.com/elastic/go-seccomp-bpf/arch"
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// TestSeccompCoversEveryABI runs the filters init loads, as the kernel
// runs them (every filter, the strictest answer wins), on each call the
// box denies, numbered and tagged as each ABI the kernel takes from a
// box's process numbers and tags it. A call through the 32-bit ABI
// (int $0x80 on x86-64: any 32-bit program, or a 64-bit one that asks)
// must be denied as the native one is; this machine's kernel may not
// offer that ABI at all (TestAttackSeccompGaps then proves nothing), so
// the filters are judged here, kernel or not.
func TestSeccompCoversEveryABI(t *testing.T) {
	native, err := arch.GetInfo("")
	if err != nil {
		t.Fatal(err)
	}
	abis := []*arch.Info{native}
	if c := compatArch(); c != nil {
		abis = append(abis, c)
	}
	for _, nested := range []bool{false, true} {
		vms := boxFilters(t, native, nested)
		for _, abi := range abis {
			call := func(name string, arg0 uint64) uint32 {
				nr, ok := abi.SyscallNames[name]
				if !ok {
					t.Fatalf("%s has no %s", abi.Name, name)
				}
				return decide(t, vms, uint32(abi.ID), uint32(nr), arg0)
			}
			denied := 0
			for _, name := range deniedSyscalls {
				if _, ok := abi.SyscallNames[name]; !ok {
					continue // the ABI has no such call
				}
				denied++
				if got := call(name, 0); got&unix.SECCOMP_RET_ACTION_FULL == unix.SECCOMP_RET_ALLOW {
					t.Errorf("BREACH: nested=%v: %s through the %s ABI is allowed", nested, name, abi.Name)
				}
			}
			if denied < len(deniedSyscalls)/2 {
				t.Errorf("%s: only %d of the denied calls exist: wrong table?", abi.Name, denied)
			}
			newUserAllowed := nested
			for _, c := range []struct {
				what  string
				name  string
				arg0  uint64
				allow bool
			}{
				{"clone a process", "clone", uint64(unix.SIGCHLD), true},
				{"clone a network namespace", "clone", unix.CLONE_NEWNET | uint64(unix.SIGCHLD), false},
				{"clone a mount namespace", "clone", unix.CLONE_NEWNS | uint64(unix.SIGCHLD), false},
				{"clone a user namespace", "clone", unix.CLONE_NEWUSER | uint64(unix.SIGCHLD), newUserAllowed},
				{"clone3", "clone3", 0, false},
				{"an AF_VSOCK socket", "socket", unix.AF_VSOCK, false},
				// The kernel reads the family as an int: the upper half is dropped.
				{"an AF_VSOCK socket, the family's upper half set", "socket", 1<<32 | unix.AF_VSOCK, false},
				{"an AF_INET socket, the family's upper half set", "socket", 1<<32 | unix.AF_INET, true},
				{"an AF_INET socket", "socket", unix.AF_INET, true},
				{"getpid", "getpid", 0, true},
			} {
				got := call(c.name, c.arg0)&unix.SECCOMP_RET_ACTION_FULL == unix.SECCOMP_RET_ALLOW
				if got != c.allow {
					t.Errorf("nested=%v: %s through the %s ABI: allowed %v, want %v", nested, c.what, abi.Name, got, c.allow)
				}
			}
		}
		// A 32-bit socketcall's family is in memory: refused, whatever it asks.
		for _, abi := range abis {
			nr, ok := abi.SyscallNames["socketcall"]
			if !ok {
				continue // the ABI has no socketcall: nothing hides a family
			}
			for _, call := range []uint64{1 /* SYS_SOCKET */, 3 /* SYS_CONNECT */, 8 /* SYS_SOCKETPAIR */} {
				switch got := decide(t, vms, uint32(abi.ID), uint32(nr), call); {
				case got&unix.SECCOMP_RET_ACTION_FULL == unix.SECCOMP_RET_ALLOW:
					t.Errorf("BREACH: nested=%v: socketcall(%d) through the %s ABI is allowed: its family may be AF_VSOCK", nested, call, abi.Name)
				case got != retENOSYS:
					t.Errorf("nested=%v: socketcall(%d) through the %s ABI answers %#x, want ENOSYS (libc's cue to make the direct call)", nested, call, abi.Name, got)
				}
			}
		}
		// An architecture the kernel never tags a box's call with is refused.
		foreign := arch.AARCH64.ID
		if native.ID == foreign {
			foreign = arch.X86_64.ID
		}
		if got := decide(t, vms, uint32(foreign), 0, 0); got == unix.SECCOMP_RET_ALLOW {
			t.Errorf("nested=%v: a call of a foreign architecture is allowed", nested)
		}
	}
}

// boxFilters returns init's filters as BPF machines: the programs init
// loads, as it assembles them before its setup (assembleSeccomp), taken
// apart again.
func boxFilters(t *testing.T, native *arch.Info, nested bool) []*bpf.VM {
	t.Helper()
	if a, err := arch.GetInfo(""); err != nil || a.ID != native.ID {
		t.Fatalf("init assembles its programs for this process's architecture, not %s", native.Name)
	}
	progs, err := assembleSeccomp(nested)
	if err != nil {
		t.Fatal(err)
	}
	var vms []*bpf.VM
	for _, raw := range [][]unix.SockFilter{progs.main, progs.compat} {
		prog := make([]bpf.Instruction, len(raw))
		for i, r := range raw {
			prog[i] = bpf.RawInstruction{Op: r.Code, Jt: r.Jt, Jf: r.Jf, K: r.K}.Disassemble()
		}
		vm, err := bpf.NewVM(prog)
		if err != nil {
			t.Fatal(err)
		}
		vms = append(vms, vm)
	}
	return vms
}

// decide runs every filter on one call and returns the kernel's answer:
// the action of lowest precedence value (as signed, SECCOMP_RET_KILL_PROCESS
// first). The machines read words in network order, so struct
// seccomp_data's words are written that way here (the kernel reads them
// in the host's; each 32-bit load sees the same value).
func decide(t *testing.T, vms []*bpf.VM, auditArch, nr uint32, arg0 uint64) uint32 {
	t.Helper()
	data := make([]byte, 64)
	binary.BigEndian.PutUint32(data[seccompNr:], nr)
	binary.BigEndian.PutUint32(data[seccompArch:], auditArch)
	binary.BigEndian.PutUint32(data[seccompArg0:], uint32(arg0))
	binary.BigEndian.PutUint32(data[16+20-seccompArg0:], uint32(arg0>>32)) // the other half
	best := int32(unix.SECCOMP_RET_ALLOW)
	for _, vm := range vms {
		r, err := vm.Run(data)
		if err != nil {
			t.Fatal(err)
		}
		if int32(uint32(r)) < best {
			best = int32(uint32(r))
		}
	}
	return uint32(best)
}
