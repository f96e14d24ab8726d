//go:build linux

package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"golang.org/x/sys/unix"
)

// buildBox builds the box's root under s.Root, on what init prepared
// before its setup (p, nil when nothing was; see prep_linux.go), and
// pivots into it.
func buildBox(s *setup, p *preparedRoot) ([]string, error) {
	if p != nil && p.err != nil {
		return nil, fmt.Errorf("%w: prepare the box's root: %w", ErrUnavailable, p.err)
	}
	if p != nil && !p.fits(s) {
		// Built afresh instead, in an unprepared init's order.
		if err := unix.Unmount(p.root, unix.MNT_DETACH); err != nil {
			return nil, fmt.Errorf("drop the prepared root: %w", err)
		}
		p = nil
	}
	root := s.Root
	if p == nil {
		if err := newRoot(root); err != nil {
			return nil, err
		}
	}
	itr.mark("root-tmpfs")
	var layers []string
	var img *imageRoot
	if s.RootFS != "" {
		var err error
		if img, err = showImage(s.RootFS, root); err != nil {
			return nil, fmt.Errorf("%w: the box's image: %w", ErrUnavailable, err)
		}
		layers = append(layers, "root from the image (read-only): "+strings.Join(img.shown, " "))
	}
	etc, err := rootEtc(root, img, p)
	if err != nil {
		return nil, err
	}
	layers = append(layers, "minimal /etc: "+strings.Join(etc, " "))
	itr.mark("etc")
	disk, err := attachDisk(s, root)
	if err != nil {
		return nil, err
	}
	itr.mark("attachDisk")
	more, err := mountForBox(s, root, disk, img, p == nil)
	if err != nil {
		return nil, err
	}
	layers = append(layers, more...)
	if err := detachDisk(disk, root, s.Disk); err != nil {
		return nil, err
	}
	itr.mark("detachDisk")
	// The image's top-level links (bin -> usr/bin) come last: nothing
	// above resolves a path through them while the host is still the
	// root they would resolve against.
	if err := img.link(root); err != nil {
		return nil, err
	}
	if err := pivot(root); err != nil {
		return nil, err
	}
	itr.mark("pivot")
	more, err = sealRoot(s, p == nil)
	return append(layers, more...), err
}

// rootEtc fills root/etc with what was not prepared and returns what it
// holds, sorted.
func rootEtc(root string, img *imageRoot, p *preparedRoot) ([]string, error) {
	var etc []string
	if p != nil {
		etc = append(etc, p.etc...)
	} else {
		var err error
		if etc, err = writeEtc(root); err != nil {
			return nil, err
		}
	}
	if p == nil || img != nil {
		more, err := showEtcEntries(root, img)
		if err != nil {
			return nil, err
		}
		etc = append(etc, more...)
	}
	sort.Strings(etc)
	return etc, nil
}

// mountForBox mounts what the box's setup names (and, in a root not
// prepared, the host's system, /dev and /proc, in their old order).
func mountForBox(s *setup, root, disk string, img *imageRoot, fresh bool) ([]string, error) {
	var layers []string
	if fresh && img == nil {
		if err := showHostDirs(root, systemDirs, nil); err != nil {
			return nil, err
		}
	}
	if err := showHostDirs(root, s.ReadOnly, img); err != nil {
		return nil, err
	}
	if fresh && img == nil {
		if err := showTopLinks(root); err != nil {
			return nil, err
		}
	}
	itr.mark("hostDirs")
	ws, err := mountWorkspace(s, root)
	if err != nil {
		return nil, err
	}
	layers = append(layers, ws)
	itr.mark("workspace")
	if s.Objects != "" {
		if err := mountObjects(s.Objects, filepath.Join(root, WorkDir)); err != nil {
			return nil, err
		}
		layers = append(layers, "git objects from the shared object store, read-only")
	}
	if err := mountDiskScratch(root, disk, s.NestedUser); err != nil {
		return nil, err
	}
	if fresh {
		if err := mountDevProc(root); err != nil {
			return nil, err
		}
	}
	itr.mark("scratch")
	for i, c := range s.Caches {
		if err := mountCache(root, s.CacheDir, i, c, s.NestedUser); err != nil {
			return nil, err
		}
		layers = append(layers, "copy-on-write cache "+c.Box)
	}
	if s.ProxySock != "" {
		dst := filepath.Join(root, "run/sandgate/proxy.sock")
		if err := touch(dst); err != nil {
			return nil, err
		}
		if err := unix.Mount(s.ProxySock, dst, "", unix.MS_BIND, ""); err != nil {
			return nil, fmt.Errorf("bind proxy socket: %w", err)
		}
	}
	return layers, nil
}

// sealRoot makes the pivoted root read-only (.git too) and, in a root
// not prepared, names the box and brings its loopback up.
func sealRoot(s *setup, fresh bool) ([]string, error) {
	layers := []string{"mount namespace with a fresh root (system directories read-only)"}
	if s.GitRO {
		if st, err := os.Stat(WorkDir + "/.git"); err == nil && st.IsDir() {
			if err := bindRO(WorkDir+"/.git", WorkDir+"/.git"); err != nil {
				return nil, err
			}
			layers = append(layers, ".git read-only")
		}
	}
	if err := unix.Mount("", "/", "", unix.MS_REMOUNT|unix.MS_BIND|unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV, ""); err != nil {
		return nil, fmt.Errorf("make root read-only: %w", err)
	}
	itr.mark("rootRO")
	if fresh {
		if err := netAndName(); err != nil {
			return nil, err
		}
	}
	itr.mark("lo")
	if s.ProxySock != "" {
		if err := startBridge(); err != nil {
			return nil, fmt.Errorf("egress bridge: %w", err)
		}
		layers = append(layers, "network namespace (loopback only; HTTP(S) egress through the harness allowlist proxy)")
	} else {
		layers = append(layers, "network namespace (loopback only)")
	}
	return layers, nil
}

func mountWorkspace(s *setup, root string) (string, error) {
	dst := filepath.Join(root, WorkDir)
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return "", err
	}
	if s.Lower != "" {
		lowers := []string{s.Lower}
		if len(s.Layers) > 0 {
			lowers = s.Layers
		}
		opts, done, err := overlayOptions(lowers, s.Upper, s.OvlWork)
		if err != nil {
			return "", err
		}
		defer done()
		if err := unix.Mount("overlay", dst, "overlay", 0, opts); err != nil {
			return "", fmt.Errorf("mount overlay workspace: %w", err)
		}
		return "overlay workspace (copy-on-write over a read-only snapshot)", nil
	}
	if err := unix.Mount(s.Workspace, dst, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return "", fmt.Errorf("bind workspace: %w", err)
	}
	return "workspace copy", nil
}
