//go:build linux

package sandbox

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// A rootless harness's disk: a tmpfs of exactly the limit's size instead
// of an ext4 image, since a loop device needs root (see rootless_linux.go
// for what that costs).
//
// The harness cannot mount anything in its own mount namespace, so a
// helper (this binary again, role "tmpfs") starts in a user and mount
// namespace of its own, where it may mount a tmpfs, makes it detached
// (fsmount: in no mount table) and sends it back. The harness then holds
// it as it holds an image's mount: it lays out the directories and reads
// the box's changes through the descriptor, and hands it to the box's
// init, which moves it into the box's namespace.
//
// Measured on the development machine (Linux 6.18, 2 loaded cores), the
// helper's start and the mount take a few milliseconds; there is no mkfs
// and no image to delete.

// tmpfsMarker, in a state directory, says a rootless box's disk is in
// use there; tmpfsSaved is the copy of it a closed box left. A marker
// without a copy is a harness that died with its box's disk: a later
// Start there would find an empty disk where the run's workspace was, and
// is refused.
const (
	tmpfsMarker = "disk.tmpfs"
	tmpfsSaved  = "disk.saved"
)

// openTmpfsDisk makes the disk of a rootless box with state in stateDir,
// holding what the last box there left (a resumed run).
func openTmpfsDisk(stateDir string, limit int64) (*disk, error) {
	if _, err := os.Stat(filepath.Join(stateDir, "disk.img")); err == nil {
		return nil, fmt.Errorf("%w: this run's disk is an ext4 image made by a root harness: resume it as root", ErrUnavailable)
	}
	saved := filepath.Join(stateDir, tmpfsSaved)
	st, errSaved := os.Lstat(saved)
	if errSaved == nil && !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%w: %s is no regular file", ErrUnavailable, saved)
	}
	if _, err := os.Stat(filepath.Join(stateDir, tmpfsMarker)); err == nil && errSaved != nil {
		return nil, fmt.Errorf("%w: rootless boxes keep their disk in memory (tmpfs), and this run's harness died with its box: its workspace cannot be resumed (start the run again, or run as root for a disk that survives a crash)", ErrUnavailable)
	}
	d, err := newTmpfsDisk(limit)
	if err != nil {
		return nil, err
	}
	if errSaved == nil {
		// The copy goes once it is back: were this harness to die, an
		// older copy must not pass for the run's workspace.
		out, err := d.tarAsOwner("-xpf", saved)
		if err == nil {
			err = os.Remove(saved)
		}
		if err != nil {
			d.close()
			return nil, fmt.Errorf("%w: restore this run's disk: %w %s", ErrUnavailable, err, out)
		}
	}
	return d, markTmpfs(stateDir)
}

// markTmpfs records that a box's disk is in use in stateDir.
func markTmpfs(stateDir string) error {
	return os.WriteFile(filepath.Join(stateDir, tmpfsMarker), nil, 0o600)
}

// save archives a rootless box's disk into its state directory, once the
// box is dead (nothing writes to it, nothing can swap a file for a link
// under the archiver), so a resumed run finds its workspace. The archive
// keeps links as links and the overlay's whiteouts and xattrs.
func (d *disk) save(stateDir string) error {
	dst := filepath.Join(stateDir, tmpfsSaved)
	if out, err := d.tarAsOwner("-cf", dst+".tmp"); err != nil {
		return fmt.Errorf("save the box's disk: %w %s", err, out)
	}
	return os.Rename(dst+".tmp", dst)
}

// newTmpfsDisk mounts a tmpfs of limit bytes through the helper and lays
// it out.
func newTmpfsDisk(limit int64) (*disk, error) {
	if err := memoryHasRoom(limit); err != nil {
		return nil, err
	}
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	sock, child, err := newDiskSocket()
	if err != nil {
		return nil, err
	}
	defer sock.Close()
	cmd := exec.Command(self)
	cmd.Args = []string{"sandgate-box-tmpfs", strconv.FormatInt(limit, 10)}
	cmd.Env = []string{roleEnv + "=tmpfs"}
	cmd.ExtraFiles = []*os.File{child}
	var out lockedWriter
	cmd.Stderr = &out
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags:  unix.CLONE_NEWUSER | unix.CLONE_NEWNS,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}},
		Pdeathsig:   syscall.SIGKILL,
	}
	err = cmd.Start()
	child.Close()
	if err != nil {
		return nil, fmt.Errorf("%w: disk limit: a user namespace for the tmpfs: %w", ErrUnavailable, err)
	}
	fd, rerr := -1, error(nil)
	if s, err := unix.Dup(int(sock.Fd())); err != nil {
		rerr = err
	} else {
		fd, rerr = receiveDisk(s) // closes s
	}
	werr := cmd.Wait()
	if rerr != nil || werr != nil {
		if fd >= 0 {
			unix.Close(fd)
		}
		return nil, fmt.Errorf("%w: disk limit: mount a tmpfs in a user namespace: %v %v %s", ErrUnavailable, rerr, werr, out.String())
	}
	d := &disk{limit: limit, mnt: os.NewFile(uintptr(fd), "sandgate-tmpfs-disk")}
	if err := d.layout(); err != nil {
		d.close()
		return nil, fmt.Errorf("disk limit: %w", err)
	}
	return d, nil
}

// runTmpfs is the helper: it mounts the tmpfs detached and sends it on
// fd 3.
func runTmpfs() int {
	fail := func(err error) int { fmt.Fprintln(os.Stderr, "tmpfs:", err); return 1 }
	if len(os.Args) != 2 {
		return fail(errors.New("usage: sandgate-box-tmpfs BYTES"))
	}
	limit, err := strconv.ParseInt(os.Args[1], 10, 64)
	if err != nil || limit <= 0 {
		return fail(fmt.Errorf("bad size %q", os.Args[1]))
	}
	fsfd, err := unix.Fsopen("tmpfs", unix.FSOPEN_CLOEXEC)
	if err != nil {
		return fail(err)
	}
	// As many inodes as ext4's default ratio gives an image of this size,
	// so a box cannot spend kernel memory on empty files without bound.
	inodes := max(limit/16384, 4096)
	for k, v := range map[string]string{"size": strconv.FormatInt(limit, 10), "nr_inodes": strconv.FormatInt(inodes, 10), "mode": "755"} {
		if err := unix.FsconfigSetString(fsfd, k, v); err != nil {
			return fail(fmt.Errorf("tmpfs %s=%s: %w", k, v, err))
		}
	}
	if err := unix.FsconfigCreate(fsfd); err != nil {
		return fail(fmt.Errorf("%w%s", err, fsLog(fsfd)))
	}
	mfd, err := unix.Fsmount(fsfd, unix.FSMOUNT_CLOEXEC, unix.MOUNT_ATTR_NOSUID|unix.MOUNT_ATTR_NODEV)
	if err != nil {
		return fail(err)
	}
	if err := unix.Sendmsg(3, []byte{0}, unix.UnixRights(mfd), nil, 0); err != nil {
		return fail(err)
	}
	return 0
}

// memoryHasRoom refuses a tmpfs disk larger than the host's memory and
// swap: it could never be filled, and the box would run out of memory
// where the limit promises it disk.
func memoryHasRoom(limit int64) error {
	var si unix.Sysinfo_t
	if err := unix.Sysinfo(&si); err != nil {
		return err
	}
	if room := int64(si.Totalram+si.Totalswap) * int64(si.Unit); limit > room {
		return fmt.Errorf("%w: the disk limit of %s is more than the host has free in memory and swap (%s), where a rootless box keeps its disk (a tmpfs): lower sandbox.disk",
			ErrUnavailable, FormatBytes(limit), FormatBytes(room))
	}
	return nil
}

// tarAsOwner runs tar on the disk (its fd 3: another user namespace's
// process may not reach the harness's /proc/PID/fd) in a user namespace
// whose root is this harness's uid. The box's files are all that uid's,
// so tar reads the ones a command made unreadable (chmod 000, the
// overlay's work directory) and writes whiteouts, as root reads and
// writes the ext4 image, and can touch nothing of anyone else's.
func (d *disk) tarAsOwner(args ...string) ([]byte, error) {
	cmd := exec.Command("tar", append([]string{"--xattrs", "--xattrs-include=*", "--sparse", "-C", "/proc/self/fd/3"}, append(args, ".")...)...)
	if args[0] == "-xpf" {
		cmd.Args = cmd.Args[:len(cmd.Args)-1]
	}
	cmd.ExtraFiles = []*os.File{d.mnt}
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags:  unix.CLONE_NEWUSER,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}},
		Pdeathsig:   syscall.SIGKILL,
	}
	return cmd.CombinedOutput()
}
