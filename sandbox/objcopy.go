package sandbox

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// copyPacks copies the pack files of the source's own object directory
// into a fresh store: real copies (copy_file_range where the filesystem
// has it), never hard links into the user's .git, never through a
// symlink. Cruft packs (objects git keeps only for gc's grace period)
// stay behind, and so do the packs of the directories the repository
// borrows from (alternates): those may be another repository's, whose
// objects come in only as far as the commit reaches them (importRevs).
// A pack the user's git removes meanwhile is skipped; its objects come
// in by reachability too.
func (s *store) copyPacks(src *gitSource) error {
	own := filepath.Join(src.objects[0], "pack")
	if st, err := os.Lstat(own); err != nil || !st.IsDir() {
		return nil // no packs, or a symlink: nothing is copied
	}
	idxs, _ := filepath.Glob(filepath.Join(own, "pack-*.idx"))
	var bases []string
	var total int64
	for _, idx := range idxs {
		base := strings.TrimSuffix(idx, ".idx")
		if _, err := os.Lstat(base + ".mtimes"); err == nil {
			continue
		}
		pst, err1 := os.Lstat(base + ".pack")
		ist, err2 := os.Lstat(idx)
		if err1 != nil || err2 != nil || !pst.Mode().IsRegular() || !ist.Mode().IsRegular() {
			continue
		}
		total += pst.Size() + ist.Size()
		bases = append(bases, base)
	}
	if err := roomFor(s.cache, total, "the repository's packs"); err != nil {
		return err
	}
	for _, base := range bases {
		dst := filepath.Join(s.objects(), "pack", filepath.Base(base))
		// The pack before its index: git reads a pack once its index is
		// there.
		for _, ext := range []string{".pack", ".idx"} {
			err := copyFile(base+ext, dst+ext, 0o444)
			if errors.Is(err, fs.ErrNotExist) {
				_ = os.Remove(dst + ".pack")
				break
			}
			if err != nil {
				return fmt.Errorf("copy %s: %w", base+ext, err)
			}
		}
	}
	return nil
}

// copyFile copies the regular file src (never a symlink) to dst through a
// temporary file beside it.
func copyFile(src, dst string, perm fs.FileMode) error {
	in, err := os.OpenFile(src, os.O_RDONLY|unix.O_NOFOLLOW, 0)
	if err != nil {
		return err
	}
	defer in.Close()
	st, err := in.Stat()
	if err != nil {
		return err
	}
	if !st.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file", src)
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
	var st unix.Statfs_t
	if err := unix.Statfs(cacheDir, &st); err == nil {
		if free := int64(st.Bavail) * int64(st.Bsize); n > free {
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
