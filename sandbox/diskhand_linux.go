//go:build linux

package sandbox

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// The box's disk is made while init starts. Copying the template,
// attaching the loop device (which fsyncs the image) and mounting it
// mostly wait on the host's disk, and init's start (namespaces, exec,
// the Go runtime, /etc and the system directories) needs no disk: done
// one after the other they were two thirds of a box's start. Init
// therefore gets a socket at diskFD instead of the mount, and reads the
// mount from it (SCM_RIGHTS) when it reaches the point where the disk
// is attached. A harness that fails to make the disk closes the socket
// without sending anything, and init's setup fails: no box runs without
// its disk.

// diskResult is the outcome of making the box's disk.
type diskResult struct {
	d   *disk
	err error
}

// startDisk makes the box's disk in the background.
func (b *Box) startDisk(stateDir string, limit int64) {
	c := make(chan diskResult, 1)
	b.diskc = c
	if d := b.spareDisk; d != nil {
		b.spareDisk = nil
		if d.adopt(stateDir, limit) == nil {
			c <- diskResult{d, nil}
			return
		}
		go d.discard()
	}
	go func() {
		d, err := openDisk(stateDir, limit)
		c <- diskResult{d, err}
	}()
}

// awaitDisk waits for the disk startDisk is making and keeps it (or why
// it could not be made) in b.
func (b *Box) awaitDisk() error {
	if b.diskc != nil {
		r := <-b.diskc
		b.diskc = nil
		b.disk, b.diskErr = r.d, r.err
	}
	return b.diskErr
}

// newDiskSocket returns the harness's end of the socket the disk goes
// through and init's end, which init inherits as diskFD.
func newDiskSocket() (harness, child *os.File, err error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("disk socket: %w", err)
	}
	return os.NewFile(uintptr(fds[0]), "box-disk"), os.NewFile(uintptr(fds[1]), "box-disk-child"), nil
}

// handDisk waits for the disk and sends init a copy of its mount (see
// disk.forBox); upper names the overlay's upper directory on it, which
// must belong to the commands first ("" for none). It always closes
// sock, so init is never left waiting.
func (b *Box) handDisk(sock *os.File, upper string) error {
	defer sock.Close()
	if err := b.awaitDisk(); err != nil {
		return err
	}
	if upper != "" {
		// The overlay's root takes its owner from the upper directory.
		if err := handOver(b.disk.path(upper)); err != nil {
			return err
		}
	}
	mnt, err := b.disk.forBox()
	if err != nil {
		return err
	}
	defer mnt.Close()
	if err := unix.Sendmsg(int(sock.Fd()), []byte{0}, unix.UnixRights(int(mnt.Fd())), nil, 0); err != nil {
		return fmt.Errorf("hand the disk to the box's init: %w", err)
	}
	return nil
}

// Init's side.

// receiveDisk reads the disk's mount from the socket sock (diskFD) and
// closes the socket. Anything but one fd is refused.
func receiveDisk(sock int) (int, error) {
	defer unix.Close(sock)
	buf, oob := make([]byte, 1), make([]byte, unix.CmsgSpace(4*4))
	n, oobn, _, _, err := unix.Recvmsg(sock, buf, oob, unix.MSG_CMSG_CLOEXEC)
	if err != nil {
		return -1, fmt.Errorf("receive the box's disk: %w", err)
	}
	var fds []int
	if msgs, err := unix.ParseSocketControlMessage(oob[:oobn]); err == nil {
		for _, m := range msgs {
			if rights, err := unix.ParseUnixRights(&m); err == nil {
				fds = append(fds, rights...)
			}
		}
	}
	if n == 0 || len(fds) != 1 {
		for _, fd := range fds {
			unix.Close(fd)
		}
		return -1, errors.New("receive the box's disk: the harness sent none")
	}
	return fds[0], nil
}
