//go:build linux

package sandbox

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// Formatting the box's disk image took about 15 ms of every box start
// (mkfs.ext4 of a 4 GiB sparse file, fsync included). The formatted
// result is the same every time but for its UUID, so each size is
// formatted once into a template and every box gets a sparse copy of it:
// only the template's few data extents (about 2 MiB: superblocks, group
// descriptors, bitmaps, the root directory) are copied, in the kernel
// (copy_file_range), and the holes stay holes. The copy is exactly the
// limit's size, like a fresh image, so the disk limit holds the same.
//
// Templates live in the harness's cache directory, never a shared one:
// an image is mounted by root, and a crafted ext4 image is an attack on
// the kernel, so a template is used only from a directory and as a file
// that the harness's uid owns and no one else can write.

// mkfsOptions are how the disk is formatted.
//   - -m 0: no reserved blocks, the box gets the whole limit.
//   - -O ^resize_inode: no blocks reserved for growing the filesystem
//     online (a box's disk never grows). They were 511 of the 545
//     blocks of data in a 4 GiB image; each box's copy of them was
//     written back by the fsync the loop device does as it attaches
//     the image: attaching took 5-7 ms with them and 1.5-2.5 ms without.
//   - discard: discarding a sparse file punches holes, which read as
//     zeros, so mkfs marks the inode tables zeroed without writing
//     them, and the kernel does not zero them in the background after
//     each mount; lazy init keeps the image sparse and mkfs fast.
var mkfsOptions = []string{"-m", "0", "-O", "^resize_inode", "-E", "discard,lazy_itable_init=1,lazy_journal_init=1"}

// imageTemplateDir is where templates are kept (a variable for tests).
var imageTemplateDir = func() string { return filepath.Join(DefaultCacheDir(), "disk-images") }

// imageTemplate returns the formatted template image of size bytes,
// making it first when there is none.
func imageTemplate(size int64) (string, error) {
	dir := imageTemplateDir()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	if err := ownedPrivate(dir, true); err != nil {
		return "", err
	}
	// Templates are named by what makes them, so a change formats new
	// ones.
	h := sha256.Sum256(fmt.Append(nil, mkfsOptions, diskLayout))
	name := filepath.Join(dir, fmt.Sprintf("ext4-%d-%s.img", size, hex.EncodeToString(h[:4])))
	if st, err := os.Lstat(name); err == nil && st.Size() == size && ownedPrivate(name, false) == nil {
		return name, nil
	}
	// The disk's directories are made by mkfs (-d), so a box's start
	// does not create them and its close has less to write back.
	tree, err := os.MkdirTemp(dir, ".tmp-layout-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tree)
	for _, l := range diskLayout {
		if err := os.Mkdir(filepath.Join(tree, l.name), 0o755); err != nil {
			return "", err
		}
		if err := os.Chmod(filepath.Join(tree, l.name), l.mode); err != nil {
			return "", err
		}
	}
	tmp := tree + ".img"
	if err := formatImage(tmp, size, tree); err != nil {
		return "", err
	}
	if err := os.Rename(tmp, name); err != nil {
		return "", err
	}
	// Templates made another way (an older sandgate's) are not used again.
	old, _ := filepath.Glob(filepath.Join(dir, "ext4-*.img"))
	for _, o := range old {
		if !strings.HasSuffix(o, "-"+hex.EncodeToString(h[:4])+".img") {
			_ = os.Remove(o)
		}
	}
	return name, nil
}

// ownedPrivate refuses a path that is a symlink, not the harness's uid's,
// or writable by anyone else.
func ownedPrivate(path string, isDir bool) error {
	var st unix.Stat_t
	if err := unix.Lstat(path, &st); err != nil {
		return err
	}
	kind := uint32(unix.S_IFREG)
	if isDir {
		kind = unix.S_IFDIR
	}
	if st.Mode&unix.S_IFMT != kind || int(st.Uid) != os.Geteuid() || st.Mode&0o022 != 0 {
		return fmt.Errorf("%s: not a private %s of uid %d", path, map[bool]string{true: "directory", false: "file"}[isDir], os.Geteuid())
	}
	return nil
}

// copySparse copies src's data extents into a new file dst of size
// bytes, leaving its holes as holes.
func copySparse(src, dst string, size int64) error {
	in, err := os.OpenFile(src, os.O_RDONLY|unix.O_NOFOLLOW, 0)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	err = copyExtents(in, out, size)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(dst)
	}
	return err
}

func copyExtents(in, out *os.File, size int64) error {
	if err := out.Truncate(size); err != nil {
		return err
	}
	for off := int64(0); off < size; {
		data, err := unix.Seek(int(in.Fd()), off, unix.SEEK_DATA)
		if errors.Is(err, unix.ENXIO) {
			return nil // only holes from here on
		}
		if err != nil {
			return err
		}
		hole, err := unix.Seek(int(in.Fd()), data, unix.SEEK_HOLE)
		if err != nil {
			return err
		}
		if err := copyRange(in, out, data, hole-data); err != nil {
			return err
		}
		off = hole
	}
	return nil
}

// copyRange copies n bytes at off from in to the same offset in out: in
// the kernel where it can, else through a buffer.
func copyRange(in, out *os.File, off, n int64) error {
	roff, woff := off, off
	for n > 0 {
		c, err := unix.CopyFileRange(int(in.Fd()), &roff, int(out.Fd()), &woff, int(n), 0)
		if err != nil {
			_, err := io.Copy(io.NewOffsetWriter(out, woff), io.NewSectionReader(in, roff, n))
			return err
		}
		if c == 0 {
			return io.ErrUnexpectedEOF
		}
		n -= int64(c)
	}
	return nil
}
