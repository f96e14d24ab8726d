//go:build linux

package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// The part of a box's root that no Options change is built by init
// before it reads its setup: for an init from the pool (zygote_linux.go)
// while it waits to be taken, off the box's start. That is the root's
// tmpfs, the generated /etc, /dev, /dev/shm and /proc, the hostname and
// loopback, and for a box on the host's system (no image) the host's
// /etc entries, /usr, /opt and the usr-merge links: by trace two thirds
// of init's mounts before this change. Everything an Options field
// names (the workspace, snapshot and disk, the read-only paths, caches,
// the proxy socket, an image's tree) is still mounted after the take,
// then init pivots and locks itself down as before.
//
// What was prepared is this init's alone: it is in the init's private
// mount namespace (made private before the tmpfs is mounted), which no
// box shares, and the init serves one box and dies with it. Whether the
// host's system was prepared is part of the pool's key (an image box
// does not take it); host sources are fingerprinted when bound and again
// at the take, and a box whose read-only paths would be covered or
// redirected by what was prepared (see conflictsWithPrep), or whose
// host /etc changed meanwhile, gets its root built afresh, in the order
// an unprepared init builds it.

// Init learns from its environment, before any setup, what to prepare.
const (
	prepEnv     = "SANDGATE_BOX_PREP" // "host" or "image"
	prepRootEnv = "SANDGATE_BOX_ROOT" // the setup's Root (boxRoot)
)

// preparedRoot is what init built before its setup.
type preparedRoot struct {
	root string
	host bool     // the host's system directories and /etc entries are shown
	etc  []string // the /etc entries shown
	// print is hostPrint when the host's were bound.
	print string
	err   error
}

// prepareFromEnv prepares what init's environment asks for, or returns
// nil when it asks for nothing.
func prepareFromEnv() *preparedRoot {
	kind, root := os.Getenv(prepEnv), os.Getenv(prepRootEnv)
	if kind == "" || root == "" {
		return nil
	}
	p := &preparedRoot{root: root, host: kind == "host"}
	p.err = p.build()
	return p
}

// build mounts the root and what no option changes in it.
func (p *preparedRoot) build() error {
	tr := newTracer("prep")
	if err := newRoot(p.root); err != nil {
		return err
	}
	if p.host {
		// Before the binds: a source changed while they are made differs
		// at the take.
		p.print = hostPrint()
	}
	var err error
	if p.etc, err = writeEtc(p.root); err != nil {
		return err
	}
	if p.host {
		more, err := showEtcEntries(p.root, nil)
		if err != nil {
			return err
		}
		p.etc = append(p.etc, more...)
		if err := showSystem(p.root); err != nil {
			return err
		}
	}
	tr.mark("etc+system")
	if err := mountDevProc(p.root); err != nil {
		return err
	}
	tr.mark("dev+proc")
	return netAndName()
}

// fits reports whether a box of s can use what was prepared.
func (p *preparedRoot) fits(s *setup) bool {
	return p.root == s.Root && p.host == (s.RootFS == "") && !conflictsWithPrep(s.ReadOnly) &&
		(!p.host || hostPrint() == p.print)
}

// newRoot makes init's mounts private and mounts the tmpfs that becomes
// the box's root.
func newRoot(root string) error {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make mounts private: %w", err)
	}
	if err := unix.Mount("tmpfs", root, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=0755,size=16m"); err != nil {
		return fmt.Errorf("mount new root: %w", err)
	}
	return nil
}

// netAndName sets the box's hostname and brings its loopback up.
func netAndName() error {
	if err := unix.Sethostname([]byte("sandbox")); err != nil {
		return fmt.Errorf("set hostname: %w", err)
	}
	return loopbackUp()
}

// conflictsWithPrep reports whether a read-only path would land where an
// unprepared init mounts something only after the read-only paths: at or
// under /dev or /proc (which cover it there), through a usr-merge link
// (made after it there, so refused), on the whole root (which would
// cover /dev and /proc here), or outside the root.
func conflictsWithPrep(readOnly []string) bool {
	for _, p := range readOnly {
		c := strings.TrimPrefix(filepath.Clean(p), "/")
		first, _, _ := strings.Cut(c, "/")
		switch {
		case c == "" || c == "." || first == "..", first == "dev", first == "proc":
			return true
		}
		for _, l := range topLinks {
			if first == strings.TrimPrefix(l, "/") {
				return true
			}
		}
	}
	return false
}

// hostPrint describes the host sources of the prepared root: each /etc
// entry shown (its name, type, device and inode, or a link's target),
// the system directories and the usr-merge links. A bind shows the
// inode it was made on, so a file replaced since (ldconfig and
// update-ca-certificates rename a new one in) changes the print.
func hostPrint() string {
	var b strings.Builder
	for _, n := range hostEtcNames() {
		printPath(&b, filepath.Join("/etc", n))
	}
	for _, d := range append(append([]string(nil), systemDirs...), topLinks...) {
		printPath(&b, d)
	}
	return b.String()
}

func printPath(b *strings.Builder, p string) {
	var st unix.Stat_t
	if err := unix.Lstat(p, &st); err != nil {
		fmt.Fprintf(b, "%s -\n", p)
		return
	}
	target := ""
	if st.Mode&unix.S_IFMT == unix.S_IFLNK {
		target, _ = os.Readlink(p)
	}
	fmt.Fprintf(b, "%s %o %d %d %s\n", p, st.Mode, st.Dev, st.Ino, target)
}
