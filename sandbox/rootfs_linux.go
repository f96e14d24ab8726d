//go:build linux

package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// imageRoot is an image's unpacked tree (Policy.RootFS) as init shows it
// for the box's root. The tree is untrusted: its symbolic links may point
// anywhere on the host, and init still sees the host's root until it
// pivots, so nothing here resolves a path of the tree except through an
// os.Root (which refuses to leave it), and the tree's top-level links are
// created in the new root only after every other mount.
type imageRoot struct {
	r     *os.Root
	top   map[string]bool   // top-level directories shown
	links map[string]string // top-level symbolic links, made last
	shown []string
}

// imageReserved are top-level names that are the box's own whatever the
// image holds there.
var imageReserved = map[string]bool{"etc": true, "work": true, "tmp": true, "dev": true, "proc": true,
	"sys": true, "home": true, "run": true, ".oldroot": true, ".disk": true}

// showImage shows each top-level directory of dir read-only (and
// without set-user-ID or device files) at the same name under root.
func showImage(dir, root string) (*imageRoot, error) {
	r, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	img := &imageRoot{r: r, top: map[string]bool{}, links: map[string]string{}}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		name := e.Name()
		if imageReserved[name] {
			continue
		}
		switch {
		case e.Type()&os.ModeSymlink != 0:
			if img.links[name], err = r.Readlink(name); err != nil {
				return nil, err
			}
		case e.IsDir():
			if err := img.bind(name, filepath.Join(root, name), true); err != nil {
				return nil, err
			}
			img.top[name] = true
			img.shown = append(img.shown, "/"+name)
		}
	}
	if len(img.top) == 0 {
		return nil, fmt.Errorf("%s holds no directories to show", dir)
	}
	return img, nil
}

// bind shows the tree's name (resolved inside the tree) at dst.
func (img *imageRoot) bind(name, dst string, isDir bool) error {
	f, err := img.r.Open(name)
	if err != nil {
		return err
	}
	defer f.Close()
	if isDir {
		err = os.MkdirAll(dst, 0o755)
	} else {
		err = touch(dst)
	}
	if err != nil {
		return err
	}
	fd, err := unix.OpenTree(int(f.Fd()), "", unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_EMPTY_PATH|unix.AT_RECURSIVE)
	if errors.Is(err, unix.ENOSYS) {
		return bindRO(fmt.Sprintf("/proc/self/fd/%d", f.Fd()), dst)
	}
	if err != nil {
		return fmt.Errorf("bind the image's %s: %w", name, err)
	}
	defer unix.Close(fd)
	attr := unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY | unix.MOUNT_ATTR_NOSUID | unix.MOUNT_ATTR_NODEV}
	if err := unix.MountSetattr(fd, "", unix.AT_EMPTY_PATH|unix.AT_RECURSIVE, &attr); err != nil {
		return fmt.Errorf("make the image's %s read-only: %w", name, err)
	}
	if err := unix.MoveMount(fd, "", unix.AT_FDCWD, dst, unix.MOVE_MOUNT_F_EMPTY_PATH); err != nil {
		return fmt.Errorf("bind the image's %s: %w", name, err)
	}
	return nil
}

// etcNames are the image's /etc entries the box may see: those shown
// from a host's /etc, and the toolchains' directories.
func (img *imageRoot) etcNames() []string {
	names := append([]string(nil), etcFromHost...)
	d, err := img.r.Open("etc")
	if err != nil {
		return names
	}
	defer d.Close()
	list, _ := d.Readdirnames(-1)
	return append(names, globbedEtc(list)...)
}

// showEtc shows the image's /etc/name at etc/name: a link is recreated
// (it resolves inside the box), anything else is bound read-only. An
// entry the tree cannot reach without leaving itself is not shown.
func (img *imageRoot) showEtc(name, etc string) (bool, error) {
	src, dst := "etc/"+name, filepath.Join(etc, name)
	st, err := img.r.Lstat(src)
	if err != nil || !(st.IsDir() || st.Mode().IsRegular() || st.Mode()&os.ModeSymlink != 0) {
		return false, nil
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return false, err
	}
	if st.Mode()&os.ModeSymlink != 0 {
		target, err := img.r.Readlink(src)
		if err != nil {
			return false, nil
		}
		return true, os.Symlink(target, dst)
	}
	return true, img.bind(src, dst, st.IsDir())
}

// free refuses a host path to be shown where the image's tree is: the
// mount point would be made inside the image (read-only) or through one
// of its links.
func (img *imageRoot) free(p string) error {
	if img == nil {
		return nil
	}
	first, _, _ := strings.Cut(strings.TrimPrefix(filepath.Clean(p), "/"), "/")
	if _, link := img.links[first]; img.top[first] || link {
		return fmt.Errorf("%w: the read-only path %s is inside the image's /%s; with an image only paths outside its directories can be shown", ErrUnavailable, p, first)
	}
	return nil
}

// link makes the image's top-level links in the new root.
func (img *imageRoot) link(root string) error {
	if img == nil {
		return nil
	}
	defer img.r.Close()
	for name, target := range img.links {
		if err := os.Symlink(target, filepath.Join(root, name)); err != nil {
			return fmt.Errorf("link the image's /%s: %w", name, err)
		}
	}
	return nil
}

// showHostDirs shows each of dirs that exists on the host read-only at
// the same path under root.
func showHostDirs(root string, dirs []string, img *imageRoot) error {
	for _, d := range dirs {
		if _, err := os.Stat(d); err != nil {
			continue
		}
		if err := img.free(d); err != nil {
			return err
		}
		if err := bindRO(d, filepath.Join(root, d)); err != nil {
			return err
		}
	}
	return nil
}

// showSystem shows the host's system directories and makes its
// usr-merge links (a prepared root's order; see buildBox for an
// unprepared one's).
func showSystem(root string) error {
	if err := showHostDirs(root, systemDirs, nil); err != nil {
		return err
	}
	return showTopLinks(root)
}

// showTopLinks recreates the host's usr-merge links (or binds what is a
// directory there).
func showTopLinks(root string) error {
	for _, l := range topLinks {
		if target, err := os.Readlink(l); err == nil {
			if err := os.Symlink(target, filepath.Join(root, l)); err != nil {
				return fmt.Errorf("link %s: %w", l, err)
			}
		} else if st, err := os.Stat(l); err == nil && st.IsDir() {
			if err := bindRO(l, filepath.Join(root, l)); err != nil {
				return err
			}
		}
	}
	return nil
}
