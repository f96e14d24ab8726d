//go:build linux

package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// layerMountOptions are the overlay options every mount of snapshot
// layers uses: user.overlay.* xattrs (what a box's overlay, mounted in a
// user namespace, reads for opaque directories), and nothing a later
// mount of the layer as a lower one would have to follow: no redirects,
// no metacopy, no inode index. Whiteouts are 0/0 character devices.
const layerMountOptions = "userxattr,redirect_dir=nofollow,metacopy=off,index=off,xino=off"

// layersSupported reports whether this process can mount the overlays a
// layered snapshot needs (the harness runs as root).
func layersSupported() bool { return os.Geteuid() == 0 }

// runLayer builds root/<commit> as a layer over the snapshot of
// baseCommit, whose layers (top first, its own directory first) are
// lowers: an overlay with the new layer as its upper directory takes
// git's checkout of commit over the base's index, so the layer holds
// only what changed, whiteouts for what went and its own .git (opaque:
// nothing of the base's .git shows through but the index it copies).
func (b *build) runLayer(ctx context.Context, baseCommit string, lowers []string) error {
	tmp, err := os.MkdirTemp(b.root, ".tmp-")
	if err != nil {
		return err
	}
	defer removeTree(tmp)
	if err := b.writeGitDir(tmp, baseCommit); err != nil {
		return err
	}
	git := filepath.Join(tmp, ".git")
	if err := copyFile(filepath.Join(lowers[0], ".git", "index"), filepath.Join(git, "index"), 0o644); err != nil {
		return err
	}
	if err := unix.Lsetxattr(git, "user.overlay.opaque", []byte("y"), 0); err != nil {
		return fmt.Errorf("mark the layer's .git opaque: %w", err)
	}
	plan, unlock, err := b.lockedPlan(ctx, tmp, baseCommit)
	if err != nil {
		return err
	}
	defer func() { unlock() }()
	if err := b.checkoutInOverlay(ctx, tmp, lowers, plan); err != nil {
		return err
	}
	unlock()
	unlock = func() {}
	own, err := settleLayer(tmp)
	if err != nil {
		return err
	}
	lower := []string{baseCommit}
	if m, err := readSnapshotMeta(b.root, baseCommit); err == nil {
		lower = append(lower, m.Lower...)
	}
	return b.publish(tmp, baseCommit, lower, own)
}

// checkoutInOverlay mounts lowers with upper as the upper directory and
// checks b.commit out in the merged view while verifying the plan's
// blobs; it unmounts before it returns.
func (b *build) checkoutInOverlay(ctx context.Context, upper string, lowers []string, plan *checkoutPlan) error {
	work, err := os.MkdirTemp(b.root, ".work-")
	if err != nil {
		return err
	}
	defer removeTree(work)
	mnt, err := os.MkdirTemp(b.root, ".mnt-")
	if err != nil {
		return err
	}
	defer os.Remove(mnt)
	// volatile: no sync of the upper's filesystem at unmount, which
	// would flush every dirty page on it (a base built a moment ago);
	// a flat build does not sync either. The work directory, marked
	// by it as unusable again, is removed with the mount.
	opts := fmt.Sprintf("lowerdir=%s,upperdir=%s,workdir=%s,%s,volatile", strings.Join(lowers, ":"), upper, work, layerMountOptions)
	if err := mountLayers(mnt, opts, unix.MS_NOSUID|unix.MS_NODEV); err != nil {
		return err
	}
	defer unmountLayers(mnt)
	if err := b.checkout(ctx, upper, mnt, plan); err != nil {
		return err
	}
	return unmountLayers(mnt)
}

// mountLayers mounts an overlay with opts at mnt; options longer than a
// page are refused by the kernel, and are refused here first.
func mountLayers(mnt, opts string, flags uintptr) error {
	if len(opts) >= os.Getpagesize() {
		return fmt.Errorf("overlay of snapshot layers: options of %d bytes, more than a page", len(opts))
	}
	if err := unix.Mount("overlay", mnt, "overlay", flags, opts); err != nil {
		return fmt.Errorf("mount the snapshot's layers at %s: %w", mnt, err)
	}
	return nil
}

// unmountLayers unmounts mnt once; a mount already gone is no error.
func unmountLayers(mnt string) error {
	err := unix.Unmount(mnt, 0)
	if errors.Is(err, unix.EBUSY) {
		err = unix.Unmount(mnt, unix.MNT_DETACH)
	}
	if err != nil && !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.ENOENT) {
		return fmt.Errorf("unmount %s: %w", mnt, err)
	}
	return nil
}

// settleLayer counts a new layer's bytes (all of it is its own) and
// hands its entries over to the commands' uid; whiteouts stay the
// harness's.
func settleLayer(dir string) (int64, error) {
	var n int64
	err := snapshotEntries(dir, nil, func(p string, st *unix.Stat_t) error {
		n += st.Blocks * 512
		if isWhiteout(st) {
			return nil
		}
		return handOverEntry(p, st)
	})
	return n, err
}

// isWhiteout reports an overlay whiteout: a 0/0 character device.
func isWhiteout(st *unix.Stat_t) bool {
	return st.Mode&unix.S_IFMT == unix.S_IFCHR && st.Rdev == 0
}

// ensureView mounts the read-only merged view of a layered snapshot's
// layers at view, unless it is mounted already (by this process or an
// earlier one: it stays mounted until the snapshot is evicted). The
// harness reads a layered snapshot's files there; boxes stack its
// layers themselves (see snapshotLayers).
func ensureView(view string, layers []string) error {
	parent := filepath.Dir(view)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return err
	}
	lock, err := os.OpenFile(filepath.Join(parent, ".lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return err
	}
	defer lock.Close()
	if err := unix.Flock(int(lock.Fd()), unix.LOCK_EX); err != nil {
		return err
	}
	if mounted(view) {
		return nil
	}
	if err := os.Mkdir(view, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return err
	}
	opts := "lowerdir=" + strings.Join(layers, ":") + "," + layerMountOptions
	return mountLayers(view, opts, unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV)
}

// removeView unmounts and removes a snapshot's view, if it has one.
func removeView(view string) error {
	if mounted(view) {
		if err := unix.Unmount(view, unix.MNT_DETACH); err != nil && !errors.Is(err, unix.EINVAL) {
			return fmt.Errorf("unmount %s: %w", view, err)
		}
	}
	if err := os.Remove(view); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// mounted reports whether something is mounted at dir: it lies on
// another device than its parent.
func mounted(dir string) bool {
	var a, b unix.Stat_t
	if unix.Lstat(dir, &a) != nil || unix.Lstat(filepath.Dir(dir), &b) != nil {
		return false
	}
	return a.Dev != b.Dev
}
