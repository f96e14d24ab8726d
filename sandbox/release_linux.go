//go:build linux

package sandbox

import (
	"os"
	"path/filepath"
	"sync"
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
	pending map[string]chan struct{} // by image path
	all     sync.WaitGroup           // every release under way (tests wait for them)
}{pending: map[string]chan struct{}{}}

// releaseLater closes files (namespaces, then the disk's mount) in the
// background; a disk's image is marked busy until they are closed.
func releaseLater(files []*os.File, d *disk) {
	var image string
	if d != nil && d.mnt != nil {
		files = append(files, d.mnt)
		d.mnt = nil
		image = releaseKey(d.image)
	}
	if len(files) == 0 {
		return
	}
	done := make(chan struct{})
	if image != "" {
		releases.Lock()
		prev := releases.pending[image]
		releases.pending[image] = done
		releases.Unlock()
		if prev != nil {
			<-prev // never two releases of one image at once
		}
	}
	releases.all.Add(1)
	go func() {
		defer releases.all.Done()
		for _, f := range files {
			_ = f.Close()
		}
		if image != "" {
			releases.Lock()
			if releases.pending[image] == done {
				delete(releases.pending, image)
			}
			releases.Unlock()
		}
		close(done)
	}()
}

// awaitRelease waits until no box of this process still holds image.
func awaitRelease(image string) {
	releases.Lock()
	c := releases.pending[releaseKey(image)]
	releases.Unlock()
	if c != nil {
		<-c
	}
}

func releaseKey(image string) string {
	if image == "" {
		return ""
	}
	return imagePath(image)
}

// imagePath is the path the kernel names image by (a loop device's
// backing_file): absolute, with no symlink in it. A resumed run may
// reach the image through a link the box that holds it did not go
// through (TestAttackImageThroughAnotherPathWaitsForItsRelease); under
// any other name, neither wait would see the holder, and the image
// would be mounted twice.
func imagePath(image string) string {
	if real, err := filepath.EvalSymlinks(image); err == nil {
		image = real
	}
	if abs, err := filepath.Abs(image); err == nil {
		return abs
	}
	return image
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
