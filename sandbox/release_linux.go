//go:build linux

package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// Tearing down what a dead box leaves.
//
// Close kills init and waits for it: when Wait returns, every process
// of the box is gone (init is its PID namespace's first process, and the
// kernel reaps the namespace before init's exit is reported). What
// stays is inert: the box's mount namespace (its tmpfs, binds, overlay
// and /proc) and its disk. Tearing those down took most of Close by
// trace (init's exit dropped the last reference to its mount namespace,
// and the kernel unmounted it all in init's exit path, RCU grace periods
// included: 8-14 ms; closing the disk unmounted its ext4 and freed its
// loop device: 7-14 ms). So the harness holds the namespace (an fd of
// /proc/PID/ns/mnt, opened when init starts), and Close hands the
// namespace and the disk to a goroutine that lets go of them after it
// returns. No process can use them any more: a namespace fd lets only
// its holder (the harness) in, and the disk is in no mount table.
//
// A new box that opens the same image (a resumed run) waits for its
// release first: two live mounts of one ext4 image corrupt it. Another
// process's run waits on the loop device instead (waitImageFree).

var releases = struct {
	sync.Mutex
	pending map[string]chan struct{} // by releaseKeys
	all     sync.WaitGroup           // every release under way (tests wait for them)
}{pending: map[string]chan struct{}{}}

// releaseLater closes files (namespaces, then the disk's mount) in the
// background; a disk's image is marked busy until they are closed.
func releaseLater(files []*os.File, d *disk) {
	var keys []string
	if d != nil && d.mnt != nil {
		files = append(files, d.mnt)
		d.mnt = nil
		keys = releaseKeys(d.image)
	}
	if len(files) == 0 {
		return
	}
	done := make(chan struct{})
	var prev []chan struct{}
	releases.Lock()
	for _, k := range keys {
		if c := releases.pending[k]; c != nil {
			prev = append(prev, c)
		}
		releases.pending[k] = done
	}
	releases.Unlock()
	for _, c := range prev {
		<-c // never two releases of one image at once
	}
	releases.all.Add(1)
	go func() {
		defer releases.all.Done()
		for _, f := range files {
			_ = f.Close()
		}
		releases.Lock()
		for _, k := range keys {
			if releases.pending[k] == done {
				delete(releases.pending, k)
			}
		}
		releases.Unlock()
		close(done)
	}()
}

// awaitRelease waits until no box of this process still holds image.
func awaitRelease(image string) {
	keys := releaseKeys(image)
	var held []chan struct{}
	releases.Lock()
	for _, k := range keys {
		if c := releases.pending[k]; c != nil {
			held = append(held, c)
		}
	}
	releases.Unlock()
	for _, c := range held {
		<-c
	}
}

// releaseKeys names image in releases.pending: by the file itself
// (device and inode, the same through a symlink, a bind mount or any
// other path: TestAttackImageThroughBindMountWaitsForItsRelease) and by
// imagePath, for an image that cannot be looked at. A release is found
// by any key it shares.
func releaseKeys(image string) []string {
	if image == "" {
		return nil
	}
	keys := []string{"path " + imagePath(image)}
	if id, err := statID(image); err == nil {
		keys = append(keys, fmt.Sprintf("file %d:%d", id.dev, id.ino))
	}
	return keys
}

// fileID is a file's identity, as a loop device records its backing
// file's (LOOP_GET_STATUS64's lo_device and lo_inode).
type fileID struct{ dev, ino uint64 }

func statID(path string) (fileID, error) {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return fileID{}, &os.PathError{Op: "stat", Path: path, Err: err}
	}
	return fileID{dev: uint64(st.Dev), ino: st.Ino}, nil
}

// imagePath is the path the kernel names image by (a loop device's
// backing_file): absolute, with no symlink in it. A resumed run may
// reach the image through a link the box that holds it did not go
// through (TestAttackImageThroughAnotherPathWaitsForItsRelease). Through
// a bind mount the names differ still: the waits compare the file's
// identity too (releaseKeys, loopsHolding).
func imagePath(image string) string {
	if real, err := filepath.EvalSymlinks(image); err == nil {
		image = real
	}
	if abs, err := filepath.Abs(image); err == nil {
		return abs
	}
	return image
}

// imageFreeTimeout bounds the wait for a killed box's loop device.
var imageFreeTimeout = 30 * time.Second

// waitImageFree waits until no loop device is backed by image. A run
// resumed right after its harness was killed finds the old box's mount
// still being torn down: its writes reach the image only at that
// unmount, so mounting the image again before then shows a workspace
// without the run's change, and two live mounts of one ext4 image
// corrupt it. Past the timeout, or when the loop devices cannot be
// asked, the box fails closed.
func waitImageFree(image string, timeout time.Duration) error {
	abs := imagePath(image)
	deadline := time.Now().Add(timeout)
	for {
		held, err := loopsHolding(image)
		if err != nil {
			return fmt.Errorf("%w: disk image %s: which loop devices hold it: %w", ErrUnavailable, abs, err)
		}
		if len(held) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%w: disk image %s is still attached to %s after %s: a previous box of this run has not let go (is the run still running in another process?)",
				ErrUnavailable, abs, strings.Join(held, ", "), timeout)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// loopsHolding lists the loop devices backed by image: by the name the
// kernel gives their backing file (imagePath), or by the file itself
// (its device and inode), which another path to it (a bind mount of the
// runs directory) does not change. A loop device that cannot be asked is
// listed as holding it (fail closed); an image that is not there is
// compared by name alone.
func loopsHolding(image string) ([]string, error) {
	path := imagePath(image)
	id, err := statID(image)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	byID := err == nil
	var held []string
	files, _ := filepath.Glob("/sys/block/loop*/loop/backing_file")
	for _, f := range files {
		name := filepath.Base(filepath.Dir(filepath.Dir(f)))
		b, err := os.ReadFile(f)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			continue // detached since the glob
		case err != nil:
			held = append(held, fmt.Sprintf("%s (%v)", name, err))
			continue
		case strings.TrimSpace(string(b)) == path:
			held = append(held, name)
			continue
		}
		if !byID {
			continue
		}
		if same, err := loopBacks(name, id); err != nil {
			held = append(held, fmt.Sprintf("%s (%v)", name, err))
		} else if same {
			held = append(held, name)
		}
	}
	return held, nil
}

// loopBacks reports whether loop device name is backed by the file id.
// Opening it does not hold it past the call: a loop device with
// autoclear whose last holder lets go meanwhile detaches at our close.
func loopBacks(name string, id fileID) (bool, error) {
	f, err := os.OpenFile("/dev/"+name, os.O_RDONLY|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.ENXIO) {
		return false, nil // detached since
	}
	if err != nil {
		return false, err
	}
	defer f.Close()
	info, err := unix.IoctlLoopGetStatus64(int(f.Fd()))
	if errors.Is(err, unix.ENXIO) {
		return false, nil // detached since
	}
	if err != nil {
		return false, fmt.Errorf("%s: LOOP_GET_STATUS64: %w", name, err)
	}
	return info.Device == id.dev && info.Inode == id.ino, nil
}

// holdMountNS opens init's mount namespace, so that its exit does not
// tear it down (see above). Without it (no such file: an old kernel),
// Close pays the teardown as it did.
func (b *Box) holdMountNS() {
	f, err := os.Open("/proc/" + itoa64(int64(b.cmd.Process.Pid)) + "/ns/mnt")
	if err == nil {
		b.deadNS = append(b.deadNS, f)
	}
}
