//go:build linux

package sandbox

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// The control channel is a socketpair between the harness and the box's
// init. No command can open or inherit init's end (it is close-on-exec,
// init is not dumpable, and commands run as another uid in a nested
// Landlock domain with pidfd_getfd and ptrace denied), but the harness does
// not rely on that alone: the kernel stamps every message with its
// sender's pid (SO_PASSCRED), and the harness accepts bytes only from
// init's pid. Anything else means the box is compromised: it is killed and
// every pending command fails.

// newChannel makes the socketpair; the harness end is non-blocking (so
// Close interrupts a read) and asks for sender credentials.
func newChannel() (harness, child *os.File, err error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("socketpair: %w", err)
	}
	// Both calls share err: without credentials or non-blocking reads
	// the channel is unsafe, so a failure of either closes the pair.
	err = unix.SetsockoptInt(fds[0], unix.SOL_SOCKET, unix.SO_PASSCRED, 1)
	if err == nil {
		err = unix.SetNonblock(fds[0], true)
	}
	if err != nil {
		unix.Close(fds[0])
		unix.Close(fds[1])
		return nil, nil, fmt.Errorf("control channel: %w", err)
	}
	return os.NewFile(uintptr(fds[0]), "box"), os.NewFile(uintptr(fds[1]), "box-child"), nil
}

// credReader reads the harness end and refuses bytes not sent by init.
type credReader struct {
	rc  syscall.RawConn
	pid int // init's pid as the harness sees it
	oob []byte
}

// newCredReader reads f, accepting bytes only from pid.
func newCredReader(f *os.File, pid int) (*credReader, error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return nil, fmt.Errorf("control channel: %w", err)
	}
	return &credReader{rc: rc, pid: pid, oob: make([]byte, unix.CmsgSpace(unix.SizeofUcred))}, nil
}

// errForged marks bytes on the channel from a process other than init.
type errForged struct{ pid, uid int32 }

func (e errForged) Error() string {
	return fmt.Sprintf("a process other than the box's init (pid %d, uid %d) wrote to the control channel: the box is compromised and was killed", e.pid, e.uid)
}

func (r *credReader) Read(p []byte) (int, error) {
	var n, oobn int
	var rerr error
	err := r.rc.Read(func(fd uintptr) bool {
		n, oobn, _, _, rerr = unix.Recvmsg(int(fd), p, r.oob, 0)
		return rerr != unix.EAGAIN
	})
	if err == nil {
		err = rerr
	}
	if err != nil {
		return 0, err
	}
	if n == 0 {
		return 0, io.EOF
	}
	cred, cerr := senderOf(r.oob[:oobn])
	if cerr != nil {
		return 0, cerr
	}
	if int(cred.Pid) != r.pid {
		return 0, errForged{cred.Pid, int32(cred.Uid)}
	}
	return n, nil
}

// senderOf extracts the kernel-stamped sender credentials of one read.
func senderOf(oob []byte) (*unix.Ucred, error) {
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return nil, fmt.Errorf("control channel: %w", err)
	}
	for i := range msgs {
		if c, err := unix.ParseUnixCredentials(&msgs[i]); err == nil {
			return c, nil
		}
	}
	return nil, fmt.Errorf("control channel: a message came without its sender's credentials")
}

// newNonce returns a fresh random value for one request.
func newNonce() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
