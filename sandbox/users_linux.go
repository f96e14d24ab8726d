//go:build linux

package sandbox

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"
)

// Who is who inside a box. Init is box uid 0 (the harness's own uid on the
// host) and keeps its capabilities to build the box and start commands;
// every command runs as CommandUID with no capabilities.
//
// When the harness runs as root, CommandUID is mapped to HostCommandID, an
// unprivileged host uid that owns nothing on the host but the workspace,
// so a command is no one in particular to the kernel: it cannot read files
// owned by root (not even ones a bind mount forgot to hide), cannot signal
// or trace init, and cannot write anything root owns. A harness that is
// not root cannot map a second host uid; its commands then run as
// CommandUID in a user namespace of their own, nested in the box's, mapped
// to the harness's uid (as every rootless sandbox does) — still with no
// capabilities and fenced off from init by a nested Landlock domain.
const (
	CommandUID = 1000
	CommandGID = 1000
	// HostCommandID is the host uid and gid of commands when the harness
	// runs as root. It is far above the ranges distributions hand out to
	// users and to subordinate-id ranges.
	HostCommandID = 1_879_000_000
)

// unmappedGID is a box gid that boxIDMaps never maps (0 and CommandGID).
const unmappedGID = 65534

// rootHarness reports whether the harness can map a second host uid.
func rootHarness() bool { return os.Geteuid() == 0 && !pretendNotRoot.Load() }

// pretendNotRoot makes a root harness take the path of one that is not
// (a nested user namespace per command), so tests can exercise it.
var pretendNotRoot atomic.Bool

// boxIDMaps are the box user namespace's uid and gid maps.
func boxIDMaps() (uids, gids []syscall.SysProcIDMap) {
	uids = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}}
	gids = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}}
	if rootHarness() {
		uids = append(uids, syscall.SysProcIDMap{ContainerID: CommandUID, HostID: HostCommandID, Size: 1})
		gids = append(gids, syscall.SysProcIDMap{ContainerID: CommandGID, HostID: HostCommandID, Size: 1})
	}
	return uids, gids
}

// handOver makes dir and everything below it owned by the commands' host
// uid, so commands can change the workspace they are given and nothing
// else. Without root there is nothing to do: commands then map to the
// harness's uid, which already owns dir.
func handOver(dir string) error {
	if !rootHarness() {
		return nil
	}
	var st unix.Stat_t
	if err := unix.Lstat(dir, &st); err == nil && st.Uid == HostCommandID && st.Gid == HostCommandID {
		return nil // handed over before (a cached snapshot)
	}
	// The top directory goes last: it marks the whole tree as handed over.
	// Entries owned already are left alone: a snapshot built on another
	// links its files, and chown would touch the shared inodes' ctime.
	err := filepath.WalkDir(dir, func(p string, _ fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		var st unix.Stat_t
		if unix.Lstat(p, &st) == nil && st.Uid == HostCommandID && st.Gid == HostCommandID {
			return nil
		}
		return unix.Lchown(p, HostCommandID, HostCommandID)
	})
	if err != nil {
		return fmt.Errorf("hand the workspace over to the commands' uid: %w", err)
	}
	return unix.Lchown(dir, HostCommandID, HostCommandID)
}

// handedOver reports whether a snapshot was handed over to the
// commands' uid whole (its top directory goes last).
func handedOver(dir string) bool {
	if !rootHarness() {
		return true // nothing to hand over
	}
	var st unix.Stat_t
	return unix.Lstat(dir, &st) == nil && st.Uid == HostCommandID && st.Gid == HostCommandID
}

// handOverEntry hands one entry of a snapshot being built over to the
// commands' uid (st is its lstat).
func handOverEntry(p string, st *unix.Stat_t) error {
	if !rootHarness() || st.Uid == HostCommandID && st.Gid == HostCommandID {
		return nil
	}
	if err := unix.Lchown(p, HostCommandID, HostCommandID); err != nil {
		return fmt.Errorf("hand the snapshot over to the commands' uid: %w", err)
	}
	return nil
}
