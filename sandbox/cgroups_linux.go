//go:build linux

package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

const cgroupRoot = "/sys/fs/cgroup"

// cgroups caps a box's memory and process count. It uses cgroup v2 where
// the controllers are there, else the v1 memory and pids hierarchies.
type cgroups struct {
	dirs []string
	v2   bool
}

// sweepStale removes empty cgroups left by harnesses that were killed
// before they could clean up (their name carries the dead init's pid).
func sweepStale() {
	for _, parent := range []string{cgroupRoot, filepath.Join(cgroupRoot, "memory"), filepath.Join(cgroupRoot, "pids")} {
		dirs, _ := filepath.Glob(filepath.Join(parent, "sandgate-*"))
		for _, d := range dirs {
			pid, err := strconv.Atoi(strings.TrimPrefix(filepath.Base(d), "sandgate-"))
			if err != nil {
				continue
			}
			if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); err == nil {
				continue // still running (or the pid was reused): leave it
			}
			if b, err := os.ReadFile(filepath.Join(d, "cgroup.procs")); err == nil && len(strings.TrimSpace(string(b))) == 0 {
				_ = os.Remove(d)
			}
		}
	}
}

func newCgroups(name string, l Limits) (*cgroups, error) {
	sweepStale()
	if _, err := os.Stat(filepath.Join(cgroupRoot, "cgroup.controllers")); err == nil {
		ctrl, _ := os.ReadFile(filepath.Join(cgroupRoot, "cgroup.subtree_control"))
		if strings.Contains(string(ctrl), "memory") && strings.Contains(string(ctrl), "pids") {
			d := filepath.Join(cgroupRoot, name)
			cg := &cgroups{dirs: []string{d}, v2: true}
			if err := os.Mkdir(d, 0o755); err != nil {
				return nil, err
			}
			return cg, cg.write(map[string]string{"memory.max": itoa64(l.MemoryBytes), "pids.max": strconv.Itoa(l.Pids)}, d)
		}
	}
	mem, pids := filepath.Join(cgroupRoot, "memory", name), filepath.Join(cgroupRoot, "pids", name)
	cg := &cgroups{}
	for _, d := range []string{mem, pids} {
		if err := os.Mkdir(d, 0o755); err != nil {
			cg.remove()
			return nil, fmt.Errorf("create cgroup %s: %w (memory and pids controllers are needed, as root)", d, err)
		}
		cg.dirs = append(cg.dirs, d)
	}
	if err := cg.write(map[string]string{"memory.limit_in_bytes": itoa64(l.MemoryBytes), "memory.memsw.limit_in_bytes": itoa64(l.MemoryBytes)}, mem); err != nil {
		// memsw exists only with swap accounting; the plain limit is enough.
		if cg.write(map[string]string{"memory.limit_in_bytes": itoa64(l.MemoryBytes)}, mem) != nil {
			cg.remove()
			return nil, err
		}
	}
	if err := cg.write(map[string]string{"pids.max": strconv.Itoa(l.Pids)}, pids); err != nil {
		cg.remove()
		return nil, err
	}
	return cg, nil
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
	for _, d := range c.dirs {
		if err := os.WriteFile(filepath.Join(d, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0o644); err != nil {
			return fmt.Errorf("join %s: %w", d, err)
		}
	}
	return nil
}

func (c *cgroups) describe() string {
	if c.v2 {
		return "cgroup v2 memory and pids limits"
	}
	return "cgroup v1 memory and pids limits"
}

// remove deletes the cgroups once their processes are gone, killing any
// straggler first.
func (c *cgroups) remove() error {
	var errs []error
	for _, d := range c.dirs {
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
