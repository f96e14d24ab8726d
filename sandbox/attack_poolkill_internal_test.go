//go:build linux

package sandbox

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

const poolHelperEnv = "SANDGATE_TEST_POOL_HELPER"

// TestPoolHelperHarness is the harness TestAttackKilledHarnessLeavesNoSpare
// kills: it starts and closes a box, so a spare init and disk wait, says
// where they are, and waits to be killed.
func TestPoolHelperHarness(t *testing.T) {
	if os.Getenv(poolHelperEnv) == "" {
		t.Skip("run by TestAttackKilledHarnessLeavesNoSpare")
	}
	b, err := Start(context.Background(), Options{Workspace: t.TempDir(), StateDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	b.Close()
	zygotes.mu.Lock()
	c := zygotes.next
	zygotes.mu.Unlock()
	z := <-c
	if z == nil || z.b.spareDisk == nil {
		fmt.Println("NOSPARE")
		os.Exit(1)
	}
	fmt.Printf("SPARE %d %s %s\n", z.b.cmd.Process.Pid, z.b.spareDisk.image, filepath.Base(z.b.cg.all[0]))
	time.Sleep(time.Hour)
}

// TestAttackKilledHarnessLeavesNoSpare: a harness killed (SIGKILL) with
// a spare init and disk outstanding leaves no init running, no loop
// device on the spare's image, and the next harness to make a spare
// removes the image and the cgroups: nothing a later box could be given.
func TestAttackKilledHarnessLeavesNoSpare(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the disk needs root")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self, "-test.run=^TestPoolHelperHarness$", "-test.v")
	// The helper's t.TempDir (its box's workspace and state) goes under
	// ours: killed, it removes nothing itself.
	cmd.Env = append(os.Environ(), poolHelperEnv+"=1", "TMPDIR="+t.TempDir())
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	var pid int
	var image, cgName string
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if _, err := fmt.Sscanf(sc.Text(), "SPARE %d %s %s", &pid, &image, &cgName); err == nil {
			break
		}
	}
	if pid == 0 {
		t.Fatal("the helper harness made no spare")
	}
	if err := syscall.Kill(pid, 0); err != nil {
		t.Fatalf("the spare init is not running before the kill: %v", err)
	}
	cmd.Process.Kill()
	cmd.Wait()
	gone := func(what string, f func() bool) {
		t.Helper()
		for i := 0; i < 500 && !f(); i++ {
			time.Sleep(10 * time.Millisecond)
		}
		if !f() {
			t.Errorf("after the harness was killed: %s", what)
		}
	}
	gone("the spare init still runs", func() bool {
		// A zombie (its reaper may be slow) runs nothing.
		st, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		_, rest, _ := strings.Cut(string(st), ") ")
		return err != nil || strings.HasPrefix(rest, "Z")
	})
	gone("a loop device still holds the spare's image", func() bool { held, err := loopsHolding(image); return err == nil && len(held) == 0 })
	// The next harness's spare sweeps what the dead one left.
	b, err := Start(context.Background(), Options{Workspace: t.TempDir(), StateDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	b.Close()
	waitSpare()
	if _, err := os.Stat(image); err == nil {
		t.Errorf("the dead harness's spare image %s is left for the next", image)
	}
	left, _ := filepath.Glob(filepath.Join(cgroupRoot, "*", cgName))
	more, _ := filepath.Glob(filepath.Join(cgroupRoot, cgName))
	if left = append(left, more...); len(left) > 0 {
		t.Errorf("the dead harness's spare cgroups are left: %s", strings.Join(left, " "))
	}
}
