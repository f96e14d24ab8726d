package image

import (
	"archive/tar"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"
)

// An entry of a layer, by type (the image is untrusted):
//
//   - Every path is resolved inside the tree (os.Root): a link is
//     followed only while it stays in the tree, so `a -> /etc` then
//     `a/passwd` is refused, never written to the host.
//   - A name with a `..` component is refused; a leading `/` is dropped
//     (the name is taken from the tree's root, as docker does).
//   - A regular file, directory or symbolic link replaces what the path
//     held (a later layer or a duplicate entry wins; a hard link to the
//     old file keeps the old content). A link's target is stored as is:
//     it resolves inside the box, never while unpacking.
//   - A hard link must name a file already in the tree; one to a
//     directory, to nothing or out of the tree is refused.
//   - `.wh.NAME` removes NAME of the layers below, `.wh..wh..opq` every
//     entry of the directory the layers below made; neither is created.
//   - Device nodes, FIFOs and other kinds are skipped and recorded.
//   - Set-user-ID and set-group-ID bits are stripped; ownership is not
//     kept: every file belongs to the unpacker (the harness), so no
//     uid of the host owns what the image says; the box reads the tree
//     by its "other" permission bits, read-only. Group and other write
//     bits are dropped: the cache is shared, only the harness writes it.
//   - A name over PATH_MAX or more than maxDepth directories deep is
//     refused (a tree nobody could walk or remove).
//   - The bytes of all files together, and the number of entries, are
//     capped (Limits): a tar bomb stops there.

// Limits bound what unpacking an image may write.
type Limits struct {
	// Bytes caps the files' bytes, all layers together (default 8 GiB).
	Bytes int64
	// Entries caps the tar entries, all layers together (default 1<<20).
	Entries int
}

func (l Limits) withDefaults() Limits {
	if l.Bytes <= 0 {
		l.Bytes = 8 << 30
	}
	if l.Entries <= 0 {
		l.Entries = 1 << 20
	}
	return l
}

// maxName and maxDepth bound an entry's name: PATH_MAX, and far deeper
// than any real image's tree (node_modules included).
const (
	maxName  = 4096
	maxDepth = 256
)

// unpacker applies layers to a tree.
type unpacker struct {
	r       *os.Root
	lim     Limits
	written int64
	entries int
	// layer holds the paths the current layer wrote: whiteouts remove
	// only what the layers below made.
	layer map[string]bool
	// Skipped lists entries not created (devices, FIFOs) and stripped
	// bits, for the record.
	Skipped []string
}

// apply unpacks one layer.
func (u *unpacker) apply(tr *tar.Reader) error {
	u.layer = map[string]bool{}
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if u.entries++; u.entries > u.lim.Entries {
			return fmt.Errorf("more than %d entries", u.lim.Entries)
		}
		name, err := clean(hdr.Name)
		if err != nil {
			return err
		}
		if name == "." {
			continue // the root itself: its mode is the tree's
		}
		dir, base := path.Split(name)
		if rest, ok := strings.CutPrefix(base, ".wh."); ok {
			if err := u.whiteout(path.Clean("./"+dir), rest); err != nil {
				return fmt.Errorf("%s: %w", hdr.Name, err)
			}
			continue
		}
		if err := u.entry(hdr, name, tr); err != nil {
			return fmt.Errorf("%s: %w", hdr.Name, err)
		}
		u.layer[name] = true
	}
}

// clean makes a tar name a path relative to the tree's root ("." for
// the root), refusing one that climbs out of it.
func clean(n string) (string, error) {
	if strings.ContainsRune(n, 0) {
		return "", fmt.Errorf("%q: a NUL in a name", n)
	}
	// A name no program in the box could open, or so deep that the
	// tree could not be walked or removed (one descriptor per level),
	// is refused: one entry must not make thousands of directories.
	if len(n) > maxName {
		return "", fmt.Errorf("a name of %d bytes (at most %d)", len(n), maxName)
	}
	if d := strings.Count(n, "/"); d > maxDepth {
		return "", fmt.Errorf("a name %d directories deep (at most %d)", d, maxDepth)
	}
	for _, c := range strings.Split(n, "/") {
		if c == ".." {
			return "", fmt.Errorf("%q: a name with .. is refused", n)
		}
	}
	return path.Clean("./" + strings.TrimLeft(n, "/")), nil
}

func (u *unpacker) entry(hdr *tar.Header, name string, tr *tar.Reader) error {
	// Nobody but the harness writes the shared cache: group and other
	// write bits go (the box sees the tree read-only anyway).
	mode := fs.FileMode(hdr.Mode) & (fs.ModePerm &^ 0o022)
	if hdr.Mode&0o6000 != 0 {
		u.Skipped = append(u.Skipped, name+": set-user/group-ID bit stripped")
	}
	if hdr.Mode&0o1000 != 0 {
		mode |= fs.ModeSticky
	}
	switch hdr.Typeflag {
	case tar.TypeDir:
		return u.dir(name, mode)
	case tar.TypeReg: // archive/tar reports the old TypeRegA as TypeReg
		return u.file(name, mode, hdr, tr)
	case tar.TypeSymlink:
		if err := u.replace(name); err != nil {
			return err
		}
		return u.r.Symlink(hdr.Linkname, name)
	case tar.TypeLink:
		return u.hardlink(name, hdr.Linkname)
	}
	u.Skipped = append(u.Skipped, fmt.Sprintf("%s: type %q not created", name, hdr.Typeflag))
	return nil
}

// replace makes way for a new entry: its parents exist (inside the
// tree), and nothing is at the name itself.
func (u *unpacker) replace(name string) error {
	if err := u.r.MkdirAll(path.Dir(name), 0o755); err != nil {
		return err
	}
	return u.r.RemoveAll(name)
}

func (u *unpacker) dir(name string, mode fs.FileMode) error {
	// The owner keeps write access so that later layers can add entries
	// (the harness may not be root); the box sees the tree read-only.
	mode |= 0o700
	if st, err := u.r.Lstat(name); err == nil && st.IsDir() {
		return u.chmod(name, mode)
	}
	if err := u.replace(name); err != nil {
		return err
	}
	// os.Root's Mkdir takes permission bits only (a sticky /tmp is
	// refused): the mode is set after, past the umask too.
	if err := u.r.Mkdir(name, 0o700); err != nil {
		return err
	}
	return u.chmod(name, mode)
}

// chmod changes a directory's mode through a descriptor of it (not
// through a name a link could redirect).
func (u *unpacker) chmod(name string, mode fs.FileMode) error {
	f, err := u.r.OpenFile(name, os.O_RDONLY|noFollow, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Chmod(mode)
}

func (u *unpacker) file(name string, mode fs.FileMode, hdr *tar.Header, tr *tar.Reader) error {
	if hdr.Size < 0 || hdr.Size > u.lim.Bytes-u.written {
		return fmt.Errorf("%d bytes: over the unpack limit of %d bytes", hdr.Size, u.lim.Bytes)
	}
	if err := u.replace(name); err != nil {
		return err
	}
	f, err := u.r.OpenFile(name, os.O_CREATE|os.O_EXCL|os.O_WRONLY|noFollow, 0o600)
	if err != nil {
		return err
	}
	n, err := io.Copy(f, io.LimitReader(tr, hdr.Size))
	u.written += n
	if err == nil && n != hdr.Size {
		err = io.ErrUnexpectedEOF
	}
	if err == nil {
		err = f.Chmod(mode)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return u.r.Chtimes(name, hdr.ModTime, hdr.ModTime)
}

func (u *unpacker) hardlink(name, target string) error {
	t, err := clean(target)
	if err != nil {
		return err
	}
	st, err := u.r.Lstat(t)
	if err != nil {
		return fmt.Errorf("hard link to %q, which the tree does not hold: %w", target, err)
	}
	if st.IsDir() {
		return fmt.Errorf("hard link to the directory %q", target)
	}
	if t == name {
		return nil
	}
	if err := u.replace(name); err != nil {
		return err
	}
	return u.r.Link(t, name)
}

// whiteout removes base (or with the opaque marker every entry) of dir
// that the layers below made.
func (u *unpacker) whiteout(dir, base string) error {
	if base == ".wh..opq" {
		return u.opaque(dir)
	}
	if base == "" || base == "." || base == ".." || strings.HasPrefix(base, ".wh.") {
		return fmt.Errorf("a whiteout of %q", base)
	}
	name := path.Join(dir, base)
	if u.layer[name] {
		return nil
	}
	return u.r.RemoveAll(name)
}

// opaque empties dir of what the layers below made, keeping what this
// layer wrote (entries may come in any order).
func (u *unpacker) opaque(dir string) error {
	st, err := u.r.Lstat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil || !st.IsDir() {
		return err
	}
	f, err := u.r.OpenFile(dir, os.O_RDONLY|noFollow, 0)
	if err != nil {
		return err
	}
	names, err := f.Readdirnames(-1)
	f.Close()
	if err != nil {
		return err
	}
	for _, n := range names {
		p := path.Join(dir, n)
		if !u.layer[p] {
			if err := u.r.RemoveAll(p); err != nil {
				return err
			}
		} else if st, err := u.r.Lstat(p); err == nil && st.IsDir() {
			if err := u.opaque(p); err != nil {
				return err
			}
		}
	}
	return nil
}
