//go:build linux

package sandbox

import (
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

// TestReceiveDisk: init takes exactly one fd from the disk socket; a
// harness that closes it without sending one (it failed to make the
// disk) or sends more leaves init with no disk, and an error.
func TestReceiveDisk(t *testing.T) {
	f, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	one := unix.UnixRights(int(f.Fd()))
	two := unix.UnixRights(int(f.Fd()), int(f.Fd()))
	for _, c := range []struct {
		name string
		oob  []byte
		send bool
		ok   bool
	}{{"one fd", one, true, true}, {"nothing: the socket closed", nil, false, false},
		{"a byte without an fd", nil, true, false}, {"two fds", two, true, false}} {
		harness, child, err := newDiskSocket()
		if err != nil {
			t.Fatal(err)
		}
		if c.send {
			if err := unix.Sendmsg(int(harness.Fd()), []byte{0}, c.oob, nil, 0); err != nil {
				t.Fatal(err)
			}
		}
		harness.Close()
		sock, err := unix.Dup(int(child.Fd())) // receiveDisk closes it
		child.Close()
		if err != nil {
			t.Fatal(err)
		}
		fd, err := receiveDisk(sock)
		if c.ok != (err == nil) {
			t.Errorf("%s: got fd %d, err %v", c.name, fd, err)
		}
		if err == nil {
			var st, want unix.Stat_t
			unix.Fstat(fd, &st)
			unix.Fstat(int(f.Fd()), &want)
			if st.Ino != want.Ino || st.Rdev != want.Rdev {
				t.Errorf("%s: received another file", c.name)
			}
			unix.Close(fd)
		}
	}
}
