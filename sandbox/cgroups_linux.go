//go:build linux

package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

const cgroupRoot = "/sys/fs/cgroup"

// cgroups caps a box's memory and process count. It uses cgroup v2 where
// the controllers are there, else the v1 memory and pids hierarchies.
//
// Commands get their own child cgroup with the process limit, and the box
// as a whole gets a little more: a fork bomb exhausts the commands' share
// while init (a Go program that needs threads) keeps room to kill it.
type cgroups struct {
	join     []string // where init lives
	all      []string // every directory created, parents first
	cmdProcs string   // cgroup.procs of the commands' cgroup
	// On v1, command threads enter the commands' memory cgroup to fork
	// and leave it right after: memTasks are the box's, cmdMemTasks the
	// commands'.
	memTasks, cmdMemTasks string
	v2                    bool
}

// initMemoryHeadroom is how much memory the box may use beyond its
// commands' limit, for init. Pages in /dev/shm belong to no process, so if
// commands and init shared one limit, filling it would make init the OOM
// killer's largest process and the box would die with every node's
// command; with the commands in a cgroup of their own, capped at the
// box's limit, the OOM killer only ever chooses among commands.
const initMemoryHeadroom = 64 << 20

// initHeadroom is how many more processes and threads the box may have
// than its commands, for init itself.
const initHeadroom = 64

var cgroupSeq atomic.Int64

// sweepStale removes empty cgroups left by harnesses that were killed
// before they could clean up (their name carries the dead harness's pid).
func sweepStale(p cgroupParents) {
	for _, parent := range []string{p.v2, p.mem, p.pids} {
		if parent == "" {
			continue
		}
		dirs, _ := filepath.Glob(filepath.Join(parent, "sandgate-*"))
		for _, d := range dirs {
			owner, _, _ := strings.Cut(strings.TrimPrefix(filepath.Base(d), "sandgate-"), "-")
			pid, err := strconv.Atoi(owner)
			if err != nil {
				continue
			}
			if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); err == nil {
				continue // still running (or the pid was reused): leave it
			}
			for _, sub := range []string{"cmds", "init"} {
				if b, err := os.ReadFile(filepath.Join(d, sub, "cgroup.procs")); err == nil && len(strings.TrimSpace(string(b))) == 0 {
					_ = os.Remove(filepath.Join(d, sub))
				}
			}
			if b, err := os.ReadFile(filepath.Join(d, "cgroup.procs")); err == nil && len(strings.TrimSpace(string(b))) == 0 {
				_ = os.Remove(d)
			}
		}
	}
}

func newCgroups(l Limits) (*cgroups, error) {
	parents, err := boxCgroupParents()
	if err != nil {
		return nil, err
	}
	sweepStale(parents)
	name := fmt.Sprintf("sandgate-%d-%d", os.Getpid(), cgroupSeq.Add(1))
	cg := &cgroups{}
	err = cg.create(parents, name, l)
	if err != nil {
		cg.remove()
		return nil, err
	}
	return cg, nil
}

func (c *cgroups) mkdir(d string) error {
	if err := os.Mkdir(d, 0o755); err != nil {
		return fmt.Errorf("create cgroup %s: %w (memory and pids controllers are needed, as root or delegated: sandgate sandbox delegate)", d, err)
	}
	c.all = append(c.all, d)
	return nil
}

func (c *cgroups) create(p cgroupParents, name string, l Limits) error {
	if p.v2 != "" {
		return c.createV2(p.v2, name, l)
	}
	return c.createV1(p, name, l)
}

// createV2 makes the box's cgroups in parent, a hierarchy's root or the
// top of a subtree delegated to this harness.
func (c *cgroups) createV2(parent, name string, l Limits) error {
	if rootless() && !v2Controllers(filepath.Join(parent, "cgroup.subtree_control")) {
		// The delegated subtree's top is the harness's to configure.
		if err := c.write(map[string]string{"cgroup.subtree_control": "+pids +memory"}, parent); err != nil {
			return err
		}
	}
	// v2 forbids processes in a cgroup whose children use controllers:
	// init and commands are siblings.
	c.v2 = true
	d := filepath.Join(parent, name)
	for _, dir := range []string{d, filepath.Join(d, "init"), filepath.Join(d, "cmds")} {
		if err := c.mkdir(dir); err != nil {
			return err
		}
		if dir == d {
			if err := c.write(map[string]string{"memory.max": itoa64(l.MemoryBytes + initMemoryHeadroom), "pids.max": strconv.Itoa(l.Pids + initHeadroom), "cgroup.subtree_control": "+pids +memory"}, d); err != nil {
				return err
			}
		}
	}
	c.join, c.cmdProcs = []string{filepath.Join(d, "init")}, filepath.Join(d, "cmds", "cgroup.procs")
	return c.write(map[string]string{"pids.max": strconv.Itoa(l.Pids), "memory.max": itoa64(l.MemoryBytes)}, filepath.Join(d, "cmds"))
}

// createV1 makes the box's cgroups in the v1 memory and pids hierarchies.
func (c *cgroups) createV1(p cgroupParents, name string, l Limits) error {
	total, cmds := strconv.Itoa(l.Pids+initHeadroom), strconv.Itoa(l.Pids)
	mem, pids := filepath.Join(p.mem, name), filepath.Join(p.pids, name)
	for _, d := range []string{mem, filepath.Join(mem, "cmds"), pids, filepath.Join(pids, "cmds")} {
		if err := c.mkdir(d); err != nil {
			return err
		}
	}
	for dir, limit := range map[string]int64{mem: l.MemoryBytes + initMemoryHeadroom, filepath.Join(mem, "cmds"): l.MemoryBytes} {
		if err := c.write(map[string]string{"memory.limit_in_bytes": itoa64(limit), "memory.memsw.limit_in_bytes": itoa64(limit)}, dir); err != nil {
			// memsw exists only with swap accounting; the plain limit is enough.
			if err := c.write(map[string]string{"memory.limit_in_bytes": itoa64(limit)}, dir); err != nil {
				return err
			}
		}
	}
	c.memTasks, c.cmdMemTasks = filepath.Join(mem, "tasks"), filepath.Join(mem, "cmds", "tasks")
	if err := c.write(map[string]string{"pids.max": total}, pids); err != nil {
		return err
	}
	c.join, c.cmdProcs = []string{mem, pids}, filepath.Join(pids, "cmds", "cgroup.procs")
	return c.write(map[string]string{"pids.max": cmds}, filepath.Join(pids, "cmds"))
}

func itoa64(n int64) string { return strconv.FormatInt(n, 10) }

func (c *cgroups) write(files map[string]string, dir string) error {
	for f, v := range files {
		if err := os.WriteFile(filepath.Join(dir, f), []byte(v), 0o644); err != nil {
			return fmt.Errorf("set %s: %w", f, err)
		}
	}
	return nil
}

// add moves a process (and so its future children) into the cgroups.
func (c *cgroups) add(pid int) error {
	for _, d := range c.join {
		if err := os.WriteFile(filepath.Join(d, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0o644); err != nil {
			return fmt.Errorf("join %s: %w", d, err)
		}
	}
	return nil
}

func (c *cgroups) describe() string {
	v, where := "v1", ""
	if c.v2 {
		v = "v2"
	}
	if rootless() {
		where = " (in the subtree delegated to the harness's user)"
	}
	return "cgroup " + v + " memory and pids limits" + where
}

// remove deletes the cgroups once their processes are gone, killing any
// straggler first.
func (c *cgroups) remove() error {
	var errs []error
	for i := len(c.all) - 1; i >= 0; i-- {
		d := c.all[i]
		if c.v2 {
			_ = os.WriteFile(filepath.Join(d, "cgroup.kill"), []byte("1"), 0o644)
		} else {
			killProcs(d)
		}
		var err error
		for i := 0; i < 100; i++ {
			if err = os.Remove(d); err == nil || os.IsNotExist(err) {
				err = nil
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// killProcs kills every process still listed in a v1 cgroup.
func killProcs(dir string) {
	b, _ := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
	for _, f := range strings.Fields(string(b)) {
		if pid, err := strconv.Atoi(f); err == nil {
			if p, err := os.FindProcess(pid); err == nil {
				_ = p.Kill()
			}
		}
	}
}

// filesHoldMemory reports how much of the commands' memory cgroup is
// tmpfs files (/dev/shm; rootless, the whole disk), and whether they hold
// nearly all of limit: then no command can start (its fork fails with
// ENOMEM) until they are gone, which only the box's end does.
//
// tmpfs pages are charged to the cgroup of the command that writes them
// and, without swap, cannot be reclaimed; neither cgroup version can
// charge a tmpfs to a cgroup of its own. Capping the commands at
// memory+disk together was measured (.ci/rootless): it ends the stuck
// box, but commands with an empty disk then held 2 GB under a 256 MiB
// memory limit. So the memory limit stays whole, and such a box fails
// closed, by name (Box.noteFilesHoldMemory).
func (c *cgroups) filesHoldMemory(limit int64) (int64, bool) {
	dir, key := filepath.Dir(c.cmdMemTasks), "shmem "
	if c.v2 {
		dir = filepath.Dir(c.cmdProcs)
	}
	b, err := os.ReadFile(filepath.Join(dir, "memory.stat"))
	if err != nil {
		return 0, false
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, key); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			return n, err == nil && n > limit-filesHeldSlack
		}
	}
	return 0, false
}

// filesHeldSlack is how little memory may be left beside the files for
// the box to count as held by them: less than a shell and a command need.
const filesHeldSlack = 16 << 20
