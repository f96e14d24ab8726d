//go:build linux

package sandbox

import (
	"fmt"
	"os"
	"runtime"
	"unsafe"

	"github.com/elastic/go-seccomp-bpf/arch"
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// Init's two seccomp programs are assembled before its setup: in a
// pooled init, while it waits to be taken (issue 25), as its root's
// option-free part is (prep_linux.go). They depend on nothing but
// whether commands get a user namespace of their own (the harness's uid,
// part of the pool's key), which init learns from its environment. What
// is prepared is data in init's memory: nothing is loaded, and nothing
// confines init, until lockDown loads it after the box is built, as
// before. No code but init's own runs in init before the take. The
// programs are used only if they were assembled for the setup's
// NestedUser; otherwise, or if assembling them failed, lockDown
// assembles them itself (and fails the box if that fails).

// prepNestedEnv tells init, before its setup, whether commands get a user
// namespace of their own: "1" or "0".
const prepNestedEnv = "SANDGATE_BOX_NESTED"

// seccompProgs are init's seccomp programs, assembled for nestedUser:
// main from seccompFilter, compat from compatFilter.
type seccompProgs struct {
	nestedUser   bool
	main, compat []unix.SockFilter
}

// prepareSeccompFromEnv assembles the programs for what init's
// environment says, or returns nil (lockDown assembles them then).
func prepareSeccompFromEnv() *seccompProgs {
	v := os.Getenv(prepNestedEnv)
	if v != "0" && v != "1" {
		return nil
	}
	p, err := assembleSeccomp(v == "1")
	if err != nil {
		return nil
	}
	return p
}

// assembleSeccomp assembles both programs for nestedUser.
func assembleSeccomp(nestedUser bool) (*seccompProgs, error) {
	insts, err := seccompFilter(nestedUser).Assemble()
	if err != nil {
		return nil, fmt.Errorf("assemble the filter: %w", err)
	}
	main, err := sockFilter(insts)
	if err != nil {
		return nil, err
	}
	native, err := arch.GetInfo("")
	if err != nil {
		return nil, err
	}
	insts, err = compatFilter(native, compatArch(), nestedUser)
	if err != nil {
		return nil, err
	}
	compat, err := sockFilter(insts)
	if err != nil {
		return nil, err
	}
	return &seccompProgs{nestedUser: nestedUser, main: main, compat: compat}, nil
}

// sockFilter assembles a program as the kernel takes it.
func sockFilter(insts []bpf.Instruction) ([]unix.SockFilter, error) {
	raw, err := bpf.Assemble(insts)
	if err != nil {
		return nil, fmt.Errorf("assemble BPF: %w", err)
	}
	if len(raw) == 0 || len(raw) > unix.BPF_MAXINSNS {
		return nil, fmt.Errorf("a seccomp program of %d instructions", len(raw))
	}
	f := make([]unix.SockFilter, len(raw))
	for i, r := range raw {
		f[i] = unix.SockFilter{Code: r.Op, Jt: r.Jt, Jf: r.Jf, K: r.K}
	}
	return f, nil
}

// seccompFor returns p when it was assembled for nestedUser, else the
// programs assembled now.
func seccompFor(p *seccompProgs, nestedUser bool) (*seccompProgs, error) {
	if p != nil && p.nestedUser == nestedUser && len(p.main) > 0 && len(p.compat) > 0 {
		return p, nil
	}
	return assembleSeccomp(nestedUser)
}

// load sets no_new_privs and loads both programs into every thread of
// init. One thread sets no_new_privs and loads them, so TSYNC gives every
// thread both (a goroutine's prctl and seccomp calls could otherwise be
// made from two threads); a thread the kernel could not reach is named
// by its id, and the box does not start.
func (p *seccompProgs) load() error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("set no_new_privs: %w", err)
	}
	for _, prog := range [][]unix.SockFilter{p.main, p.compat} {
		fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
		r, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_TSYNC, uintptr(unsafe.Pointer(&fprog)))
		runtime.KeepAlive(prog)
		if errno != 0 {
			return fmt.Errorf("load a filter: %w", errno)
		}
		if r != 0 {
			return fmt.Errorf("thread %d could not take a filter", r)
		}
	}
	return nil
}
