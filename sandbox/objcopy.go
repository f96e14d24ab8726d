package sandbox

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// copyPacks copies the pack files of the source's own object directory
// into a fresh store: real copies (copy_file_range where the filesystem
// has it), never hard links into the user's .git, never through a
// symlink, and only files owned by whoever owns the directory (so a
// pack that is another user's file, hard-linked in, stays out). Cruft
// packs (objects git keeps only for gc's grace period) stay behind, and
// so do the packs of the directories the repository borrows from
// (alternates): those may be another repository's, whose objects come
// in only as far as the commit reaches them (importRevs). A pack the
// user's git removes meanwhile is skipped; its objects come in by
// reachability too.
func (s *store) copyPacks(src *gitSource) error {
	dir, err := openPackDir(src.objects)
	if err != nil {
		return nil // no packs here (or not a plain directory): none copied
	}
	defer dir.Close()
	var owner sysStat
	if err := fstat(dir, &owner); err != nil {
		return err
	}
	names, err := dir.Readdirnames(-1)
	if err != nil {
		return err
	}
	var bases []string
	var total int64
	for _, n := range names {
		base, ok := strings.CutSuffix(n, ".idx")
		if !ok || !strings.HasPrefix(base, "pack-") || slices.Contains(names, base+".mtimes") || !slices.Contains(names, base+".pack") {
			continue
		}
		bases = append(bases, base)
		for _, ext := range []string{".pack", ".idx"} {
			var st sysStat
			if lstatAt(dir, base+ext, &st) == nil {
				total += st.Size
			}
		}
	}
	if err := roomFor(s.cache, total, "the repository's packs"); err != nil {
		return err
	}
	for _, base := range bases {
		dst := filepath.Join(s.objects(), "pack", base)
		// The pack before its index: git reads a pack once its index is
		// there.
		for _, ext := range []string{".pack", ".idx"} {
			err := copyAt(dir, base+ext, owner.Uid, dst+ext)
			if errors.Is(err, fs.ErrNotExist) || errors.Is(err, errForeign) {
				_ = os.Remove(dst + ".pack")
				break
			}
			if err != nil {
				return fmt.Errorf("copy %s: %w", filepath.Join(src.objects, "pack", base+ext), err)
			}
		}
	}
	return nil
}

// errForeign is a pack file of another owner than its directory's.
var errForeign = errors.New("not the directory owner's file")

// errSymlink is a symlink where a file was opened without following one.
var errSymlink = errors.New("a symlink")

// copyAt copies the regular file name in dir, owned by uid, to dst.
func copyAt(dir *os.File, name string, uid uint32, dst string) error {
	in, err := openAtNoFollow(dir, name)
	if errors.Is(err, errSymlink) {
		return errForeign
	}
	if err != nil {
		return &fs.PathError{Op: "open", Path: name, Err: err}
	}
	defer in.Close()
	var st sysStat
	if err := fstat(in, &st); err != nil {
		return err
	}
	if st.Mode&sIFMT != sIFREG || st.Uid != uid {
		return errForeign
	}
	return replaceFile(dst, 0o444, func(out *os.File) error {
		_, err := io.Copy(out, in)
		return err
	})
}

// copyFile copies the regular file src (never a symlink) to dst through a
// temporary file beside it.
func copyFile(src, dst string, perm fs.FileMode) error {
	in, err := openNoFollow(src)
	if err != nil {
		return err
	}
	defer in.Close()
	if st, err := in.Stat(); err != nil || !st.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file (%v)", src, err)
	}
	return replaceFile(dst, perm, func(out *os.File) error {
		_, err := io.Copy(out, in)
		return err
	})
}

// roomFor refuses to write n more bytes into the cache when they would
// not fit under its cap or on its filesystem: a repository with huge
// packs (or a tree of huge files) fails with a reason instead of filling
// the host's disk.
func roomFor(cacheDir string, n int64, what string) error {
	if max := CacheMax(); n > max {
		return fmt.Errorf("%s take %s, more than the snapshot cache's cap of %s (SANDGATE_CACHE_MAX)", what, humanSize(n), humanSize(max))
	}
	if free, ok := freeBytes(cacheDir); ok {
		if n > free {
			return fmt.Errorf("%s take %s, more than the %s free at %s", what, humanSize(n), humanSize(free), cacheDir)
		}
	}
	return nil
}

// humanSize writes a byte count for messages (1.5 GiB, 12.0 MiB).
func humanSize(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
