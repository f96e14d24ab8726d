//go:build linux

package sandbox

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"golang.org/x/sys/unix"
)

// systemDirs are shown read-only inside the box when they exist.
// /etc is built by writeEtc and showEtcEntries instead.
var systemDirs = []string{"/usr", "/opt"}

// topLinks are the usr-merge symlinks recreated in the new root.
var topLinks = []string{"/bin", "/lib", "/lib64", "/sbin", "/lib32", "/libx32"}

// shmBytes is the size of the box's /dev/shm, a tmpfs.
const shmBytes = 64 << 20

var devNodes = []string{"null", "zero", "full", "random", "urandom", "tty"}

// mountDevProc mounts the box's /dev (its few device nodes and a
// tmpfs /dev/shm) and /proc.
func mountDevProc(root string) error {
	dev := filepath.Join(root, "dev")
	if err := os.MkdirAll(dev, 0o755); err != nil {
		return err
	}
	if err := unix.Mount("tmpfs", dev, "tmpfs", unix.MS_NOSUID|unix.MS_NOEXEC, "mode=0755,size=1m"); err != nil {
		return fmt.Errorf("mount /dev: %w", err)
	}
	for _, n := range devNodes {
		p := filepath.Join(dev, n)
		if err := touch(p); err != nil {
			return err
		}
		if err := unix.Mount("/dev/"+n, p, "", unix.MS_BIND, ""); err != nil && n != "tty" {
			return fmt.Errorf("bind /dev/%s: %w", n, err)
		}
	}
	for name, target := range map[string]string{"fd": "/proc/self/fd", "stdin": "/proc/self/fd/0", "stdout": "/proc/self/fd/1", "stderr": "/proc/self/fd/2"} {
		_ = os.Symlink(target, filepath.Join(dev, name))
	}
	shm := filepath.Join(dev, "shm")
	_ = os.MkdirAll(shm, 0o1777)
	if err := unix.Mount("tmpfs", shm, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, fmt.Sprintf("mode=1777,size=%d", shmBytes)); err != nil {
		return fmt.Errorf("mount /dev/shm: %w", err)
	}
	proc := filepath.Join(root, "proc")
	_ = os.MkdirAll(proc, 0o555)
	// hidepid: a command sees only processes it could trace, so not init
	// (another uid, undumpable) and nothing it has no business with.
	// Members of hidepid's gid see every process; it defaults to host gid
	// 0, which is the commands' own gid in nested-user mode when the
	// harness's gid is 0. A gid unmapped in the box names no one.
	opts := fmt.Sprintf("hidepid=invisible,gid=%d", unmappedGID)
	if err := unix.Mount("proc", proc, "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, opts); err != nil {
		return fmt.Errorf("mount /proc: %w", err)
	}
	// The kernel's knobs are read-only whatever a process's uid: only its
	// own /proc/PID files stay writable.
	for _, p := range []string{"sys", "sysrq-trigger"} {
		if _, err := os.Lstat(filepath.Join(proc, p)); os.IsNotExist(err) {
			continue
		}
		if err := bindRO(filepath.Join(proc, p), filepath.Join(proc, p)); err != nil {
			return fmt.Errorf("make /proc/%s read-only: %w", p, err)
		}
	}
	return nil
}

func pivot(root string) error {
	old := filepath.Join(root, ".oldroot")
	if err := os.MkdirAll(old, 0o700); err != nil {
		return err
	}
	if err := unix.PivotRoot(root, old); err != nil {
		return fmt.Errorf("pivot_root: %w", err)
	}
	itr.mark("pivot_root")
	if err := unix.Chdir("/"); err != nil {
		return err
	}
	if err := unix.Unmount("/.oldroot", unix.MNT_DETACH); err != nil {
		return fmt.Errorf("detach old root: %w", err)
	}
	return os.Remove("/.oldroot")
}

func touch(p string) error {
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	return f.Close()
}

// bindRO bind-mounts src at dst and makes it and every mount below it
// read-only, keeping the flags the kernel locks for mounts copied into a
// user namespace.
func bindRO(src, dst string) error {
	st, err := os.Stat(src)
	if err != nil {
		return err
	}
	if st.IsDir() {
		err = os.MkdirAll(dst, 0o755)
	} else {
		err = touch(dst)
	}
	if err != nil {
		return err
	}
	if err := bindROTree(src, dst); !errors.Is(err, unix.ENOSYS) {
		return err
	}
	return bindROLegacy(src, dst, st.IsDir())
}

// bindROTree clones the mount tree at src, makes the whole clone
// read-only in one call and attaches it at dst: nothing reads the mount
// table, which grows with every mount (reading it for each directory
// shown was most of the CPU a box start took). ENOSYS means the kernel
// predates mount_setattr (5.12).
func bindROTree(src, dst string) error {
	fd, err := unix.OpenTree(unix.AT_FDCWD, src, unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_RECURSIVE)
	if err != nil {
		return fmt.Errorf("bind %s: %w", src, err)
	}
	defer unix.Close(fd)
	attr := unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY}
	if err := unix.MountSetattr(fd, "", unix.AT_EMPTY_PATH|unix.AT_RECURSIVE, &attr); err != nil {
		return fmt.Errorf("make %s read-only: %w", src, err)
	}
	if err := unix.MoveMount(fd, "", unix.AT_FDCWD, dst, unix.MOVE_MOUNT_F_EMPTY_PATH); err != nil {
		return fmt.Errorf("bind %s: %w", src, err)
	}
	return nil
}

// bindROLegacy binds and then remounts each mount read-only, one by one.
func bindROLegacy(src, dst string, isDir bool) error {
	if err := unix.Mount(src, dst, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("bind %s: %w", src, err)
	}
	if !isDir {
		// Nothing is mounted below a file: no need to read the mount table.
		if err := remountRO(dst); err != nil {
			return fmt.Errorf("make %s read-only: %w", dst, err)
		}
		return nil
	}
	mounts, err := mountsUnder(dst)
	if err != nil {
		return err
	}
	for _, m := range mounts {
		if err := remountRO(m); err != nil {
			return fmt.Errorf("make %s read-only: %w", m, err)
		}
	}
	return nil
}

func remountRO(p string) error {
	var sfs unix.Statfs_t
	if err := unix.Statfs(p, &sfs); err != nil {
		return err
	}
	flags := uintptr(unix.MS_BIND | unix.MS_REMOUNT | unix.MS_RDONLY)
	for st, ms := range map[int64]uintptr{unix.ST_NOSUID: unix.MS_NOSUID, unix.ST_NODEV: unix.MS_NODEV,
		unix.ST_NOEXEC: unix.MS_NOEXEC, unix.ST_NOATIME: unix.MS_NOATIME, unix.ST_NODIRATIME: unix.MS_NODIRATIME,
		unix.ST_RELATIME: unix.MS_RELATIME} {
		if sfs.Flags&st != 0 {
			flags |= ms
		}
	}
	return unix.Mount("", p, "", flags, "")
}

// mountsUnder lists p and every mount point below it, parents first.
func mountsUnder(p string) ([]string, error) {
	f, err := os.Open("/proc/thread-self/mountinfo")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 5 {
			continue
		}
		mp := unescapeMount(fields[4])
		if mp == p || strings.HasPrefix(mp, p+"/") {
			out = append(out, mp)
		}
	}
	sort.Strings(out)
	return dedupe(out), sc.Err()
}

var mountEscapes = strings.NewReplacer(`\040`, " ", `\011`, "\t", `\012`, "\n", `\134`, `\`)

func unescapeMount(s string) string { return mountEscapes.Replace(s) }

func dedupe(s []string) []string {
	out := s[:0]
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}

// loopbackUp brings lo up in the new network namespace so builds and tests
// can use localhost.
func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("loopback: %w", err)
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	ifr.SetUint16(unix.IFF_UP | unix.IFF_LOOPBACK | unix.IFF_RUNNING)
	if err := unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr); err != nil {
		return fmt.Errorf("bring loopback up: %w", err)
	}
	return nil
}

// cmdOwner is who commands are in the box's user namespace: CommandUID,
// or box uid 0 when each command maps its CommandUID onto it.
func cmdOwner(nestedUser bool) (uid, gid int) {
	if nestedUser {
		return 0, 0
	}
	return CommandUID, CommandGID
}

// openCache lets commands write into a copy-on-write cache whose host
// directories belong to the harness: the overlay takes a merged
// directory's owner from the upper layer, so the upper gets the cache's
// top directory and its first level (a Go build cache's 00…ff, from any
// of the lower layers) owned by the commands. Small files at the top
// level are copied up as the commands' (Go rewrites the checksum
// database's tree head in place, and could not open the harness's file
// for writing), each from the first lower layer that has it, the one the
// overlay shows. Deeper directories (a module cache's read-only trees)
// stay as the host has them.
func openCache(lowers []string, upper string, nestedUser bool) error {
	uid, gid := cmdOwner(nestedUser)
	if nestedUser {
		return nil // commands are the cache's owner already
	}
	seen := map[string]bool{}
	for _, lower := range lowers {
		if err := openCacheLayer(lower, upper, seen, uid, gid); err != nil {
			return err
		}
	}
	return os.Lchown(upper, uid, gid)
}

// openCacheLayer does openCache's work for one lower layer. seen are the
// top-level names of the layers above it, which hide its own.
func openCacheLayer(lower, upper string, seen map[string]bool, uid, gid int) error {
	entries, err := os.ReadDir(lower)
	if err != nil {
		return err
	}
	for _, e := range entries {
		p := filepath.Join(upper, e.Name())
		hidden := seen[e.Name()]
		seen[e.Name()] = true
		if e.Type().IsRegular() && !hidden {
			if err := copyUpSmall(filepath.Join(lower, e.Name()), p, uid, gid); err != nil {
				return err
			}
		}
		if !e.IsDir() || hidden {
			continue // a directory above is opened already
		}
		if err := os.Mkdir(p, 0o755); err != nil && !os.IsExist(err) {
			return err
		}
		if err := os.Lchown(p, uid, gid); err != nil {
			return err
		}
	}
	return nil
}

// copyUpSmall copies a host cache's top-level file of at most 64 KiB into
// the upper layer, owned by the commands; a larger one stays the host's.
// The file is opened without following links, and only once it is in
// the upper layer does the overlay show it.
func copyUpSmall(src, dst string, uid, gid int) error {
	f, err := os.OpenFile(src, os.O_RDONLY|unix.O_NOFOLLOW, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() || st.Size() > 64<<10 {
		return err
	}
	b, err := io.ReadAll(io.LimitReader(f, 64<<10))
	if err != nil {
		return err
	}
	if err := os.WriteFile(dst, b, st.Mode().Perm()); err != nil {
		return err
	}
	return os.Lchown(dst, uid, gid)
}

// mountCache shows a host cache directory copy-on-write inside the box.
func mountCache(root, stateDir string, i int, c Cache, nestedUser bool) error {
	upper, work := filepath.Join(stateDir, fmt.Sprint(i), "upper"), filepath.Join(stateDir, fmt.Sprint(i), "work")
	for _, d := range []string{upper, work} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	lowers := append([]string{c.Host}, c.Lower...)
	if err := openCache(lowers, upper, nestedUser); err != nil {
		return fmt.Errorf("cache %s: %w", c.Box, err)
	}
	dst := filepath.Join(root, c.Box)
	if err := noLinkOnWay(root, dst); err != nil {
		return fmt.Errorf("cache %s: %w", c.Box, err)
	}
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	// Directories created on the way (~/.cache, ~/go) are the commands'.
	uid, gid := cmdOwner(nestedUser)
	for d := filepath.Dir(dst); strings.HasPrefix(d, filepath.Join(root, HomeDir)+"/"); d = filepath.Dir(d) {
		if err := os.Lchown(d, uid, gid); err != nil {
			return err
		}
	}
	opts, done, err := overlayOptions(lowers, upper, work)
	if err != nil {
		return err
	}
	defer done()
	if err := unix.Mount("overlay", dst, "overlay", unix.MS_NOSUID|unix.MS_NODEV, opts); err != nil {
		return fmt.Errorf("mount cache %s: %w", c.Box, err)
	}
	return nil
}

// overlayOptions builds an overlay mount's options. The options are one
// comma-separated string in which a path may not hold a comma, colon or
// backslash; such a path (a run directory or cache somebody named so) is
// given by an O_PATH descriptor's /proc/self/fd link instead, which the
// kernel resolves to the directory itself. done closes the descriptors
// once the mount is made. lowers are the read-only layers, topmost first.
func overlayOptions(lowers []string, upper, work string) (opts string, done func(), err error) {
	var fds []int
	done = func() {
		for _, fd := range fds {
			unix.Close(fd)
		}
	}
	paths := append(append([]string(nil), lowers...), upper, work)
	for i, p := range paths {
		if !strings.ContainsAny(p, ",:\\") {
			continue
		}
		fd, err := unix.Open(p, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			done()
			return "", nil, fmt.Errorf("open %s for the overlay: %w", p, err)
		}
		fds = append(fds, fd)
		paths[i] = fmt.Sprintf("/proc/self/fd/%d", fd)
	}
	n := len(lowers)
	return fmt.Sprintf("lowerdir=%s,upperdir=%s,workdir=%s,userxattr", strings.Join(paths[:n], ":"), paths[n], paths[n+1]), done, nil
}

// noLinkOnWay refuses a symbolic link on the way from root down to dst.
// A cache's place is usually in the home directory, which is on the
// run's disk: a box before this one (a resumed run) may have left links
// there, and init, not pivoted yet, would follow an absolute one out to
// the host and make, chown and mount there as the harness
// (TestAttackCacheThroughPlantedLink). Nothing else writes the new root
// while init builds it, so what is checked here stays so.
func noLinkOnWay(root, dst string) error {
	rel, err := filepath.Rel(root, dst)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return fmt.Errorf("%s is outside the box's root", dst)
	}
	p := root
	for _, c := range strings.Split(rel, "/") {
		p = filepath.Join(p, c)
		st, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			return nil // made below by init, in the box's own tree
		}
		if err != nil {
			return err
		}
		if st.Mode()&os.ModeSymlink != 0 {
			return fmt.Errorf("%s is a symbolic link (left by an earlier box of the run?); a cache is not mounted through one", strings.TrimPrefix(p, root))
		}
	}
	return nil
}
