//go:build linux

package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Rootless boxes: a harness that is not root.
//
// Everything but two limits works unprivileged already: the box's user
// namespace maps only the harness's uid, and commands run in a nested
// user namespace of their own (see users_linux.go). The two limits:
//
//   - Memory and pids need cgroups the harness may create and fill. Root
//     prepares them once (Delegate, `sandgate sandbox delegate --user
//     NAME`), as systemd's Delegate=yes does for a user session: on
//     cgroup v1 a directory per controller under DelegatedDir, owned by
//     the user; on v2 a subtree owned by the user, which the harness must
//     run inside (v2 lets a process move another only within a subtree it
//     may write at the top). Without it a box is refused, by name.
//   - The disk limit cannot use a loop device. A tmpfs of exactly the
//     limit's size, mounted in a user namespace of the harness's own (see
//     newTmpfsDisk), holds what the ext4 image holds. It costs less to
//     make (no mkfs, no loop device) but lives in memory: what a box
//     writes is charged to its memory cgroup, so the memory limit is
//     reached first when the disk limit is the larger, and the disk dies
//     with the box. A box that closes copies it into its state directory
//     and the next box there (a resumed run) starts from that copy; a
//     harness that dies copies nothing, and a box started on its state
//     is refused rather than handed an empty disk.

// DelegatedDir is the directory, under each cgroup hierarchy's root, that
// holds the subtrees Delegate makes, one per uid.
const DelegatedDir = "sandgate-users"

// rootless reports whether the harness runs without root on the host
// (unlike pretendNotRoot, which only takes the commands' uid path).
func rootless() bool { return os.Geteuid() != 0 }

// cgroupParents are the directories a box's cgroups are made in: v2's
// one, or v1's memory and pids ones.
type cgroupParents struct{ v2, mem, pids string }

// v2Controllers reports whether the unified hierarchy at cgroupRoot
// offers the memory and pids controllers in dir (cgroup.controllers), or
// "" for the root's subtree_control.
func v2Controllers(file string) bool {
	b, err := os.ReadFile(file)
	f := strings.Fields(string(b))
	return err == nil && contains(f, "memory") && contains(f, "pids")
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// boxCgroupParents says where this harness makes its boxes' cgroups, or
// why it cannot (naming the missing piece).
func boxCgroupParents() (cgroupParents, error) {
	v2 := v2Controllers(filepath.Join(cgroupRoot, "cgroup.subtree_control"))
	if !rootless() {
		if v2 {
			return cgroupParents{v2: cgroupRoot}, nil
		}
		return cgroupParents{mem: filepath.Join(cgroupRoot, "memory"), pids: filepath.Join(cgroupRoot, "pids")}, nil
	}
	if _, err := os.Stat(filepath.Join(cgroupRoot, "cgroup.controllers")); err == nil {
		d, err := delegatedV2()
		return cgroupParents{v2: d}, err
	}
	uid := strconv.Itoa(os.Getuid())
	p := cgroupParents{mem: filepath.Join(cgroupRoot, "memory", DelegatedDir, uid), pids: filepath.Join(cgroupRoot, "pids", DelegatedDir, uid)}
	for _, d := range []string{p.mem, p.pids} {
		if !writable(d) || !writable(filepath.Join(d, "cgroup.procs")) {
			return p, fmt.Errorf("rootless box: the memory and pids limits need a cgroup subtree delegated to uid %s (%s not writable): run `sandgate sandbox delegate --user %s` as root once", uid, d, userName())
		}
	}
	return p, nil
}

// delegatedV2 finds the top of the v2 subtree delegated to this uid that
// the harness runs in: the highest ancestor of its own cgroup that it
// owns. Boxes' cgroups are made there, beside the harness's.
func delegatedV2() (string, error) {
	b, _ := os.ReadFile("/proc/self/cgroup")
	var own string
	for _, l := range strings.Split(string(b), "\n") {
		if p, ok := strings.CutPrefix(l, "0::"); ok {
			own = filepath.Join(cgroupRoot, p)
		}
	}
	top := ""
	for d := own; own != "" && d != cgroupRoot && strings.HasPrefix(d, cgroupRoot+"/"); d = filepath.Dir(d) {
		if !ownedCgroup(d) {
			break
		}
		top = d
	}
	switch {
	case top == "":
		return "", fmt.Errorf("rootless box: the memory and pids limits need the harness to run in a cgroup v2 subtree delegated to it (a systemd user session, or `sandgate sandbox delegate --user %s` and the harness started in its harness cgroup); it runs in %s", userName(), own)
	case top == own:
		return "", fmt.Errorf("rootless box: the harness runs at the top of its delegated cgroup %s; cgroup v2 allows no processes beside the boxes' cgroups: start it in a child cgroup (e.g. %s/harness)", own, own)
	case !v2Controllers(filepath.Join(top, "cgroup.controllers")):
		return "", fmt.Errorf("rootless box: the delegated cgroup %s lacks the memory or pids controller: enable them in its parents' cgroup.subtree_control (`sandgate sandbox delegate` does)", top)
	}
	return top, nil
}

// ownedCgroup reports whether a v2 cgroup directory is delegated to this
// uid: it and the files a delegate writes are writable.
func ownedCgroup(d string) bool {
	for _, f := range []string{"", "cgroup.procs", "cgroup.subtree_control"} {
		if !writable(filepath.Join(d, f)) {
			return false
		}
	}
	return true
}

func writable(p string) bool {
	return unix.Faccessat(unix.AT_FDCWD, p, unix.W_OK, unix.AT_EACCESS) == nil
}

// userName names the harness's user for a message.
func userName() string {
	if u := os.Getenv("USER"); u != "" {
		return u
	}
	return strconv.Itoa(os.Getuid())
}

// Delegate does for the user uid:gid what systemd's Delegate=yes does for
// a user session, on a machine without systemd: it makes the user's own
// cgroup subtrees (v1 memory and pids, v2 where its memory and pids
// controllers are there) and hands them over, so that user's harness can
// make its boxes' cgroups below them. Root only; running it again changes
// nothing. It returns the directories prepared.
func Delegate(uid, gid int) ([]string, error) {
	if os.Geteuid() != 0 {
		return nil, errors.New("sandbox delegate needs root: it hands a cgroup subtree to a user")
	}
	if uid == 0 {
		return nil, errors.New("sandbox delegate: root needs no delegation")
	}
	id := strconv.Itoa(uid)
	var done []string
	for _, ctrl := range []string{"memory", "pids"} {
		if _, err := os.Stat(filepath.Join(cgroupRoot, ctrl, "tasks")); err != nil {
			continue // no v1 hierarchy of this controller
		}
		d := filepath.Join(cgroupRoot, ctrl, DelegatedDir, id)
		if err := os.MkdirAll(d, 0o755); err != nil {
			return done, fmt.Errorf("delegate %s: %w", d, err)
		}
		if err := chownAll(uid, gid, d, "cgroup.procs", "tasks"); err != nil {
			return done, err
		}
		done = append(done, d)
	}
	if v2Controllers(filepath.Join(cgroupRoot, "cgroup.controllers")) {
		d, err := delegateV2(uid, gid)
		if err != nil {
			return done, err
		}
		done = append(done, d)
	}
	if len(done) == 0 {
		return nil, errors.New("sandbox delegate: this machine has neither v1 memory and pids hierarchies nor a v2 one with those controllers")
	}
	return done, nil
}

// delegateV2 makes DelegatedDir/uid with the memory and pids controllers
// and its leaf harness, where the user's harness must be started (v2
// moves a process only within a subtree its mover may write at the top).
func delegateV2(uid, gid int) (string, error) {
	parent := filepath.Join(cgroupRoot, DelegatedDir)
	d := filepath.Join(parent, strconv.Itoa(uid))
	for _, dir := range []string{cgroupRoot, parent} {
		if dir != cgroupRoot {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return "", err
			}
		}
		if err := os.WriteFile(filepath.Join(dir, "cgroup.subtree_control"), []byte("+memory +pids"), 0o644); err != nil {
			return "", fmt.Errorf("delegate: enable memory and pids in %s: %w", dir, err)
		}
	}
	for _, dir := range []string{d, filepath.Join(d, "harness")} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return "", err
		}
		if err := chownAll(uid, gid, dir, "cgroup.procs", "cgroup.subtree_control", "cgroup.threads"); err != nil {
			return "", err
		}
	}
	return d, nil
}

// chownAll gives dir and the named files in it to uid:gid.
func chownAll(uid, gid int, dir string, files ...string) error {
	for _, f := range append([]string{""}, files...) {
		if err := os.Chown(filepath.Join(dir, f), uid, gid); err != nil {
			return fmt.Errorf("delegate: %w", err)
		}
	}
	return nil
}

// Mode says whether boxes here are made by root or rootless, and what
// rootless boxes get on this machine, for `sandgate sandbox check`.
func Mode() Layer {
	if !rootless() {
		return Layer{"mode", true, "root: cgroup limits in the hierarchies' roots, the disk limit an ext4 image through a loop device"}
	}
	p, err := boxCgroupParents()
	if err != nil {
		return Layer{"mode", false, "rootless: " + err.Error()}
	}
	where := p.v2
	if where == "" {
		where = p.mem + " and " + p.pids
	}
	return Layer{"mode", true, "rootless: memory and pids limits in the delegated " + where + "; the disk limit a tmpfs in the box's user namespace (in memory, counted against the memory limit; a run resumes after its box closed, not after its harness died)"}
}

// noteFilesHoldMemory turns a command's failure into one that names the
// cause when files in memory (/tmp, the home directory, /work's changes
// on a rootless box's tmpfs disk, or /dev/shm) hold nearly all of the
// commands' memory limit: the box can start nothing more, and saying
// "fork: ENOMEM" would hide why.
func (b *Box) noteFilesHoldMemory(res *Result, err error) error {
	// Close may be removing the cgroup while a command returns.
	b.mu.Lock()
	cg := b.cg
	b.mu.Unlock()
	if cg == nil || (err == nil && (res == nil || res.ExitCode == 0)) {
		return err
	}
	held, full := cg.filesHoldMemory(b.limits.MemoryBytes)
	if !full {
		return err
	}
	where := "/dev/shm"
	if b.disk != nil && b.disk.image == "" {
		where = "/tmp, the home directory, /work's changes or /dev/shm (a rootless box's disk is a tmpfs, in memory)"
	}
	note := fmt.Sprintf("%s of files in %s hold the box's memory limit of %s: no command can start in this box again; close it, and give sandbox.memory more room than the disk is filled to",
		FormatBytes(held), where, FormatBytes(b.limits.MemoryBytes))
	if res != nil {
		res.DiskFull, res.DiskNote = true, note
	}
	if err != nil {
		return fmt.Errorf("%w: %s (%v)", ErrMemoryHeldByFiles, note, err)
	}
	return nil
}
