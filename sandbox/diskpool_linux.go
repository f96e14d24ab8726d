//go:build linux

package sandbox

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// A pre-started init (see zygote_linux.go) comes with a disk made ahead
// too: a new image copied from the template, attached to its loop device
// and mounted (detached), in the template directory. Making it took the
// box's start 4-17 ms, most of it the loop device's fsync of the copy,
// and with init started ahead it was all that init waited for. Start
// moves the image into its StateDir (a rename: the loop device follows
// the file, not its name), so the box's image is where a resumed run
// looks for it. The disk is used only for a new box (never when StateDir
// holds an image: that is a resumed run's state), of the size the box
// asks for, on the same filesystem as its StateDir, and when the host
// has room for it there; otherwise it is thrown away and the box makes
// its own, as without the pool. Nothing has been written on it: it is
// the template's copy.

var poolDiskSeq atomic.Int64

// poolDisk makes a disk of limit bytes for the pool.
func poolDisk(limit int64) (*disk, error) {
	if rootless() {
		return newTmpfsDisk(limit)
	}
	dir := imageTemplateDir()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	if err := ownedPrivate(dir, true); err != nil {
		return nil, err
	}
	sweepPoolDisks(dir)
	// The name is not one anyone can foresee (the directory is shared
	// with other harnesses, some of which may have had this pid: in
	// another boot or PID namespace), and an image already there under
	// it is never taken for a new one: it would be a resumed run's to
	// openImage, and no box may start on what another harness left.
	var rnd [8]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		return nil, err
	}
	path := filepath.Join(dir, fmt.Sprintf("pool-%d-%d-%x.img", os.Getpid(), poolDiskSeq.Add(1), rnd))
	if _, err := os.Lstat(path); !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("pooled disk %s: already there (%v)", path, err)
	}
	return openImage(path, limit)
}

// sweepPoolDisks removes the pooled images of harnesses that are gone.
func sweepPoolDisks(dir string) {
	files, _ := filepath.Glob(filepath.Join(dir, "pool-*.img"))
	for _, f := range files {
		owner, _, _ := strings.Cut(strings.TrimPrefix(filepath.Base(f), "pool-"), "-")
		if pid, err := strconv.Atoi(owner); err == nil && pid != os.Getpid() {
			if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); err != nil {
				_ = os.Remove(f)
			}
		}
	}
}

// adopt moves a pooled disk into stateDir as the box's disk, or reports
// why it cannot be (the box then makes its own).
func (d *disk) adopt(stateDir string, limit int64) error {
	if d.limit != limit {
		return fmt.Errorf("pooled disk of %d bytes, the box asks for %d", d.limit, limit)
	}
	if d.image == "" {
		// A resumed run's disk is restored by openTmpfsDisk, or refused.
		for _, f := range []string{"disk.img", tmpfsMarker, tmpfsSaved} {
			if _, err := os.Lstat(filepath.Join(stateDir, f)); err == nil {
				return fmt.Errorf("a resumed run's state (%s)", f)
			}
		}
		return markTmpfs(stateDir)
	}
	// What a disk made now would need, the box needs (see makeImage).
	if _, err := exec.LookPath("mkfs.ext4"); err != nil {
		return err
	}
	dst := filepath.Join(stateDir, "disk.img")
	moved := &disk{image: dst, limit: limit}
	if err := moved.hostHasRoom(); err != nil {
		return err
	}
	// Never over an image that exists: that is a resumed run's.
	if err := unix.Renameat2(unix.AT_FDCWD, d.image, unix.AT_FDCWD, dst, unix.RENAME_NOREPLACE); err != nil {
		return err
	}
	d.image = dst
	return nil
}

// discard unmounts a pooled disk no box will use and removes its image.
func (d *disk) discard() {
	if d == nil {
		return
	}
	_ = d.close()
	_ = os.Remove(d.image)
}
