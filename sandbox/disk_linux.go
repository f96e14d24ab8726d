//go:build linux

package sandbox

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// The box's disk limit.
//
// Everything the box can write (the workspace's overlay upper layer or its
// copy, /tmp, the home directory and the copy-on-write caches' upper
// layers) lives in one ext4 filesystem image of exactly Limits.DiskBytes,
// a sparse file in StateDir. A full filesystem answers ENOSPC; the image
// file cannot grow past its size, so the host never pays more than the
// limit, whatever the box does (1 TiB sparse files included).
//
// Why an image, by measurement on the development machine (Linux 6.18,
// ext4 root, 2 shared cores; go test -bench 'BenchmarkExecTrue/sandgate-box'):
//   - project quotas: the host's ext4 is mounted without prjquota, and
//     turning it on needs tune2fs on the unmounted filesystem: not
//     available without reformatting the host, so not measurable here.
//   - a tmpfs for every upper layer, charged to the memory cgroup: costs
//     what today's /tmp and home tmpfs cost (box start 10-16 ms), but a
//     tmpfs lives only as long as the box's mount namespace, and a resumed
//     run (after the harness was SIGKILLed) must find the change it had
//     made; it would also spend the box's RAM on build caches.
//   - an ext4 image: mkfs.ext4 of a 4 GiB sparse image takes 7-28 ms once
//     per run (e2fsprogs is Priority: required in Debian), attaching the
//     loop device and mounting 1-10 ms, unmounting 2-15 ms; box start
//     28-80 ms on a fresh run and 10-50 ms on a resumed one, on a loaded
//     machine. It survives a crash of the harness: its content is the
//     resume state.
//
// The harness mounts the image with the new mount API into a detached
// mount that appears in no mount table on the host: init moves it into the
// box's own mount namespace. When the harness and the box are gone (even
// killed), the kernel unmounts it and the loop device detaches itself
// (LO_FLAGS_AUTOCLEAR): nothing is left on the host but the image file.

// diskFD is the fd number in init of the socket its disk comes through
// (see handDisk).
const diskFD = 5

// disk is the box's size-limited filesystem, open in the harness.
type disk struct {
	image string
	limit int64
	mnt   *os.File // the root of the mounted filesystem
}

// Directories on the disk. A relative path in a setup message is inside
// the disk.
const (
	diskUpper   = "upper"
	diskOvlWork = "ovlwork"
	diskCopy    = "copy"
	diskCaches  = "caches"
	diskTmp     = "tmp"
	diskHome    = "home"
)

// openDisk creates the box's disk image (once; a resumed run reuses it),
// attaches and mounts it. It fails, naming what is missing, when the
// limit cannot be enforced.
func openDisk(stateDir string, limit int64) (*disk, error) {
	if rootless() {
		return openTmpfsDisk(stateDir, limit)
	}
	return openImage(filepath.Join(stateDir, "disk.img"), limit)
}

// openImage is openDisk for the image at path.
func openImage(path string, limit int64) (*disk, error) {
	if os.Geteuid() != 0 {
		return nil, fmt.Errorf("%w: the disk limit mounts a filesystem image through a loop device, which needs root", ErrUnavailable)
	}
	d := &disk{image: path, limit: limit}
	if st, err := os.Stat(d.image); errors.Is(err, fs.ErrNotExist) {
		if err := d.hostHasRoom(); err != nil {
			return nil, err
		}
		// A new image: no loop device can be holding it yet.
		if err := makeImage(d.image, limit); err != nil {
			return nil, err
		}
	} else if err != nil {
		return nil, err
	} else {
		// A resumed run keeps the disk it was made with: its content is
		// the run's state, and shrinking it could lose some.
		d.limit = st.Size()
		awaitRelease(d.image) // a box of this process closed on it just now
		if err := d.hostHasRoom(); err != nil {
			return nil, err
		}
		if err := waitImageFree(d.image, imageFreeTimeout); err != nil {
			return nil, err
		}
		if err := checkAfterReboot(d.image); err != nil {
			return nil, err
		}
	}
	loop, err := attachLoop(d.image)
	if err != nil {
		return nil, fmt.Errorf("%w: disk limit: %w", ErrUnavailable, err)
	}
	// The mount holds the loop device from here on; closing ours lets
	// autoclear detach it when the mount goes away.
	defer loop.Close()
	d.mnt, err = mountDetached(loop.Name())
	if err != nil {
		return nil, fmt.Errorf("%w: disk limit: %w", ErrUnavailable, err)
	}
	if err := d.layout(); err != nil {
		d.close()
		return nil, fmt.Errorf("disk limit: %w", err)
	}
	return d, nil
}

// hostHasRoom refuses a disk the host could not hold: the image is
// sparse, and a box filling it on a host without the room would fill the
// host's disk instead of its own.
func (d *disk) hostHasRoom() error {
	var st unix.Statfs_t
	if err := unix.Statfs(filepath.Dir(d.image), &st); err != nil {
		return err
	}
	var used int64
	var ist unix.Stat_t
	if err := unix.Stat(d.image, &ist); err == nil {
		used = ist.Blocks * 512
	}
	if free := int64(st.Bavail) * st.Bsize; free < d.limit-used {
		return fmt.Errorf("%w: the disk limit of %s is more than the host has free at %s (%s): free some space or lower sandbox.disk",
			ErrUnavailable, FormatBytes(d.limit), filepath.Dir(d.image), FormatBytes(free&^(1<<20-1)))
	}
	return nil
}

// makeImage writes a sparse ext4 image of exactly size bytes: a copy of
// the formatted template of that size (see imageTemplate), or, when no
// template can be had, a fresh mkfs. It is written under a temporary
// name so a crash never leaves half an image.
func makeImage(path string, size int64) error {
	tmp := path + ".tmp"
	_ = os.Remove(tmp)
	// mkfs.ext4 is required even when a template exists: the template
	// is a saving, not a way around what the disk limit needs (the
	// doctor checks for it, and a box never starts on a machine that
	// could not format its disk).
	if _, err := exec.LookPath("mkfs.ext4"); err != nil {
		return fmt.Errorf("%w: the disk limit needs mkfs.ext4 (Debian package e2fsprogs): %w", ErrUnavailable, err)
	}
	if tmpl, err := imageTemplate(size); err == nil {
		if err := copySparse(tmpl, tmp, size); err == nil {
			return renameMarked(tmp, path)
		}
		_ = os.Remove(tmp)
	}
	if err := formatImage(tmp, size, ""); err != nil {
		return err
	}
	return renameMarked(tmp, path)
}

// formatImage creates path as a sparse file of size bytes and formats
// it as ext4, holding a copy of the directory tree root when set.
func formatImage(path string, size int64, root string) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	err = f.Truncate(size)
	f.Close()
	if err != nil {
		os.Remove(path)
		return fmt.Errorf("disk image: %w", err)
	}
	mkfs, err := exec.LookPath("mkfs.ext4")
	if err != nil {
		os.Remove(path)
		return fmt.Errorf("%w: the disk limit needs mkfs.ext4 (Debian package e2fsprogs): %w", ErrUnavailable, err)
	}
	args := append([]string{"-q", "-F"}, mkfsOptions...)
	if root != "" {
		args = append(args, "-d", root)
	}
	out, err := exec.Command(mkfs, append(args, path)...).CombinedOutput()
	if err != nil {
		os.Remove(path)
		return fmt.Errorf("%w: format the disk image: %w: %s", ErrUnavailable, err, strings.TrimSpace(string(out)))
	}
	return nil
}

// attachLoop binds the image to a free loop device that detaches itself
// once nothing holds it.
func attachLoop(image string) (*os.File, error) {
	ctl, err := os.OpenFile("/dev/loop-control", os.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("loop devices: %w", err)
	}
	defer ctl.Close()
	img, err := os.OpenFile(image, os.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	defer img.Close()
	for try := 0; ; try++ {
		n, err := unix.IoctlRetInt(int(ctl.Fd()), unix.LOOP_CTL_GET_FREE)
		if err != nil {
			return nil, fmt.Errorf("find a free loop device: %w", err)
		}
		dev, err := os.OpenFile(fmt.Sprintf("/dev/loop%d", n), os.O_RDWR|unix.O_CLOEXEC, 0)
		if err != nil {
			return nil, fmt.Errorf("open loop device: %w", err)
		}
		cfg := unix.LoopConfig{Fd: uint32(img.Fd())}
		cfg.Info.Flags = unix.LO_FLAGS_AUTOCLEAR
		err = unix.IoctlLoopConfigure(int(dev.Fd()), &cfg)
		if err == nil {
			return dev, nil
		}
		dev.Close()
		// Another process took the device between GET_FREE and here.
		if !errors.Is(err, unix.EBUSY) || try == 20 {
			return nil, fmt.Errorf("attach %s to %s: %w", image, dev.Name(), err)
		}
		time.Sleep(time.Duration(try) * time.Millisecond)
	}
}

// mountDetached mounts the ext4 filesystem on dev without attaching it
// anywhere: the result is a file descriptor for its root.
func mountDetached(dev string) (*os.File, error) {
	fsfd, err := unix.Fsopen("ext4", unix.FSOPEN_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("fsopen ext4: %w", err)
	}
	defer unix.Close(fsfd)
	if err := unix.FsconfigSetString(fsfd, "source", dev); err != nil {
		return nil, fmt.Errorf("mount %s: %w", dev, err)
	}
	// No write barriers: see disk_sync_linux.go.
	if err := unix.FsconfigSetFlag(fsfd, "nobarrier"); err != nil {
		return nil, fmt.Errorf("mount %s: nobarrier: %w", dev, err)
	}
	if err := unix.FsconfigCreate(fsfd); err != nil {
		return nil, fmt.Errorf("mount %s: %w%s", dev, err, fsLog(fsfd))
	}
	mfd, err := unix.Fsmount(fsfd, unix.FSMOUNT_CLOEXEC, unix.MOUNT_ATTR_NOSUID|unix.MOUNT_ATTR_NODEV)
	if err != nil {
		return nil, fmt.Errorf("fsmount %s: %w", dev, err)
	}
	return os.NewFile(uintptr(mfd), "sandgate-disk"), nil
}

// fsLog reads the kernel's messages about a failed fsconfig.
func fsLog(fsfd int) string {
	var out []string
	buf := make([]byte, 512)
	for i := 0; i < 8; i++ {
		n, err := unix.Read(fsfd, buf)
		if err != nil || n <= 0 {
			break
		}
		out = append(out, strings.TrimSpace(string(buf[:n])))
	}
	if len(out) == 0 {
		return ""
	}
	return " (" + strings.Join(out, "; ") + ")"
}

// path names a file on the disk for the harness and the programs it
// starts (cp): through the mount's fd, which is in no mount table.
func (d *disk) path(rel ...string) string {
	return filepath.Join(append([]string{fmt.Sprintf("/proc/%d/fd/%d", os.Getpid(), d.mnt.Fd())}, rel...)...)
}

// diskLayout is the disk's directories and their modes. /tmp is
// world-writable with the sticky bit, for whichever uid commands run as.
var diskLayout = []struct {
	name string
	mode fs.FileMode
}{{diskUpper, 0o755}, {diskOvlWork, 0o755}, {diskCaches, 0o755}, {diskHome, 0o755}, {diskTmp, 0o1777 | fs.ModeSticky}}

// layout creates the disk's directories, unless the image came with
// them (a template's copy does; see imageTemplate).
func (d *disk) layout() error {
	for _, l := range diskLayout {
		p := d.path(l.name)
		st, err := os.Lstat(p)
		if err == nil && st.IsDir() && st.Mode()&(fs.ModePerm|fs.ModeSticky) == l.mode {
			continue
		}
		if err := os.MkdirAll(p, 0o755); err != nil {
			return err
		}
		if err := os.Chmod(p, l.mode); err != nil {
			return err
		}
	}
	return nil
}

// free returns the bytes still free on the disk.
func (d *disk) free() (int64, error) {
	var st unix.Statfs_t
	if err := unix.Fstatfs(int(d.mnt.Fd()), &st); err != nil {
		return 0, err
	}
	return int64(st.Bavail) * st.Bsize, nil
}

// forBox returns a fresh detached copy of the disk's mount for one init to
// move into its namespace: the harness's own mount never leaves its hands,
// so a second init (the overlay-to-copy fallback) can have one too.
func (d *disk) forBox() (*os.File, error) {
	if d.image == "" {
		// A rootless harness may not clone a mount: init moves this one,
		// so it serves one init (an overlay-to-copy retry fails closed).
		fd, err := unix.FcntlInt(d.mnt.Fd(), unix.F_DUPFD_CLOEXEC, 0)
		if err != nil {
			return nil, fmt.Errorf("%w: disk limit: %w", ErrUnavailable, err)
		}
		return os.NewFile(uintptr(fd), "sandgate-disk-box"), nil
	}
	fd, err := unix.OpenTree(int(d.mnt.Fd()), "", unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_EMPTY_PATH)
	if err != nil {
		return nil, fmt.Errorf("%w: disk limit: clone the disk mount: %w", ErrUnavailable, err)
	}
	return os.NewFile(uintptr(fd), "sandgate-disk-box"), nil
}

// describe names the limit for Layers. A workspace bound from the host
// (Options.Workspace) is the caller's directory and not on the disk.
func (d *disk) describe(workspaceOnDisk bool) string {
	if d.image == "" {
		return fmt.Sprintf("disk limit %s (rootless: a tmpfs in memory, counted against the memory limit, shared by /tmp, home, caches and an overlay workspace's changes; copied to the state directory when the box closes, lost if the harness dies)", FormatBytes(d.limit))
	}
	if !workspaceOnDisk {
		return fmt.Sprintf("disk limit %s (ext4 image shared by /tmp, home and caches; the bound workspace is not limited)", FormatBytes(d.limit))
	}
	return fmt.Sprintf("disk limit %s (ext4 image shared by /work, /tmp, home and caches)", FormatBytes(d.limit))
}

// diskToolsPresent reports what the disk limit needs and this machine
// lacks, for the doctor.
func diskToolsPresent() error {
	if _, err := exec.LookPath("mkfs.ext4"); err != nil {
		return fmt.Errorf("mkfs.ext4 missing (Debian package e2fsprogs): %w", err)
	}
	if _, err := os.Stat("/dev/loop-control"); err != nil {
		return fmt.Errorf("no loop devices: %w", err)
	}
	return nil
}

func orOK(err error) any {
	if err == nil {
		return "mkfs.ext4 and loop devices present"
	}
	return err
}

func (d *disk) close() error {
	if d == nil || d.mnt == nil {
		return nil
	}
	err := d.mnt.Close()
	d.mnt = nil
	return err
}

// Init's side.

// attachDisk moves the disk mount the harness sends into the box's mount
// namespace at root/.disk and makes the setup's relative paths point
// into it.
func attachDisk(s *setup, root string) (string, error) {
	dir := filepath.Join(root, ".disk")
	if err := os.Mkdir(dir, 0o700); err != nil {
		return "", err
	}
	mnt, err := receiveDisk(diskFD)
	if err != nil {
		return "", err
	}
	defer unix.Close(mnt)
	if err := unix.MoveMount(mnt, "", unix.AT_FDCWD, dir, unix.MOVE_MOUNT_F_EMPTY_PATH); err != nil {
		return "", fmt.Errorf("attach the box's disk: %w", err)
	}
	in := func(p *string) {
		if *p != "" && !filepath.IsAbs(*p) {
			*p = filepath.Join(dir, *p)
		}
	}
	for _, p := range []*string{&s.Upper, &s.OvlWork, &s.CacheDir, &s.Workspace} {
		in(p)
	}
	return dir, nil
}

// detachDisk hides the raw disk from the box once everything that lives
// on it is mounted from it: it moves the disk out of the box's root to
// away (outside root, on the host's tree, as the setup's Disk names it),
// where the old root's detach (see pivot) takes it along. Its own lazy
// unmount cost each box an RCU grace period, 5-20 ms of the box's start
// by trace on this 2-core machine; a move waits for none.
func detachDisk(dir, root, away string) error {
	if away == "" || !filepath.IsAbs(away) || strings.HasPrefix(filepath.Clean(away)+"/", filepath.Clean(root)+"/") {
		return fmt.Errorf("detach the box's disk: %q is not a directory outside the box's root", away)
	}
	if err := unix.MoveMount(unix.AT_FDCWD, dir, unix.AT_FDCWD, away, 0); err != nil {
		return fmt.Errorf("detach the box's disk: %w", err)
	}
	return os.Remove(dir)
}

// mountDiskScratch shows the disk's tmp and home directories at /tmp and
// the home directory, which belongs to the commands.
func mountDiskScratch(root, dir string, nestedUser bool) error {
	for d, src := range map[string]string{TmpDir: diskTmp, HomeDir: diskHome} {
		p := filepath.Join(root, d)
		if err := os.MkdirAll(p, 0o755); err != nil {
			return err
		}
		if err := unix.Mount(filepath.Join(dir, src), p, "", unix.MS_BIND, ""); err != nil {
			return fmt.Errorf("mount %s: %w", d, err)
		}
	}
	uid, gid := cmdOwner(nestedUser)
	return os.Lchown(filepath.Join(dir, diskHome), uid, gid)
}

// noteDiskFull marks a failed command's result when the disk is full (or
// the command said so: the ENOSPC message), so feedback can say why.
func (b *Box) noteDiskFull(res *Result) {
	if res == nil || res.ExitCode == 0 || b.disk == nil {
		return
	}
	free, err := b.disk.free()
	// A command that failed on ENOSPC may have deleted its partial file
	// already; its message is the other witness.
	full := (err == nil && free < max(b.disk.limit/100, 1<<20)) || bytes.Contains(res.Output, []byte("No space left on device"))
	if !full {
		return
	}
	res.DiskFull = true
	res.DiskNote = fmt.Sprintf("the box's disk limit of %s was reached (/work, /tmp, the home directory and caches share it): delete what is not needed (build outputs, caches), or raise sandbox.disk in the blueprint", FormatBytes(b.disk.limit))
}

// Discard closes the box and removes its private state, disk image
// included. Call it when the run is over for good: a run that may resume
// needs the image, which holds its change.
func (b *Box) Discard() error {
	b.mu.Lock()
	b.discarding = true
	b.mu.Unlock()
	err := b.Close()
	if b.opts.StateDir != "" {
		err = errors.Join(err, os.RemoveAll(b.opts.StateDir))
	}
	return err
}
