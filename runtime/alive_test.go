//go:build unix

package runtime_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sandgate/sandgate/runtime"
)

// deadPID is the pid of a process that has exited and been reaped.
func deadPID(t *testing.T) string {
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return strconv.Itoa(cmd.Process.Pid)
}

// TestAlive: a run is carried on only while its pid file names a live
// process; a missing, empty, garbled or dead pid, or a pid "file" that is
// a FIFO (which must not block the reader), is no process, with a reason.
func TestAlive(t *testing.T) {
	for _, c := range []struct {
		name, pid string
		fifo      bool
		want      bool
		why       string
	}{
		{"own process", strconv.Itoa(os.Getpid()), false, true, ""},
		{"no pid file", "", false, false, "no pid file"},
		{"garbage", "not a pid", false, false, "holds no pid"},
		{"dead process", deadPID(t), false, false, "is gone"},
		{"fifo", "", true, false, "not a regular file"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			switch {
			case c.fifo:
				if err := syscall.Mkfifo(filepath.Join(dir, runtime.PIDFile), 0o644); err != nil {
					t.Fatal(err)
				}
			case c.pid != "":
				if err := os.WriteFile(filepath.Join(dir, runtime.PIDFile), []byte(c.pid+"\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			alive, why := runtime.Alive(dir)
			if alive != c.want || !strings.Contains(why, c.why) {
				t.Fatalf("Alive = %v %q, want %v and a reason with %q", alive, why, c.want, c.why)
			}
			s := &runtime.Summary{Dir: dir, Status: runtime.StatusRunning}
			if marked := s.MarkInterrupted(); marked == c.want || (marked && s.Status != runtime.StatusInterrupted) {
				t.Fatalf("MarkInterrupted = %v, status %s", marked, s.Status)
			}
		})
	}
}

// TestAliveDuringRun: a running run is alive (its pid file names this
// process); once it has ended no process carries it on any more.
func TestAliveDuringRun(t *testing.T) {
	f := newFixture(t, retryLoop("[pass]", ""))
	rt, bp := f.rt, f.bp
	seen := make(chan bool, 1)
	rt.Observer = runtime.ObserverFunc(func(ev runtime.Event) {
		if ev.Type == runtime.EvNodeStarted && ev.Node == "implement" {
			alive, _ := runtime.Alive(filepath.Join(rt.RunsDir, "r1"))
			seen <- alive
		}
	})
	sum, err := rt.Run(t.Context(), bp, runtime.RunOptions{Workspace: f.ws, RunID: "r1", Inputs: map[string]any{"task": "x"}})
	if err != nil {
		t.Fatal(err)
	}
	if !<-seen {
		t.Fatal("the run was not alive while its node ran")
	}
	if alive, _ := runtime.Alive(sum.Dir); alive {
		t.Fatal("the finished run still counts as carried on")
	}
}

// TestPruneRuns: OldRuns lists ended runs past the cutoff beyond the keep
// newest, never a live one; RemoveRun removes them and refuses a run a
// process carries on.
func TestPruneRuns(t *testing.T) {
	runs := t.TempDir()
	now := time.Now()
	for _, r := range []struct {
		id, pid string
		age     time.Duration
	}{
		{"a-oldest", "", 40 * 24 * time.Hour},
		{"b-dead", deadPID(t), 30 * 24 * time.Hour},
		{"c-live", strconv.Itoa(os.Getpid()), 20 * 24 * time.Hour},
		{"d-new", "", time.Hour},
	} {
		dir := filepath.Join(runs, r.id)
		os.MkdirAll(dir, 0o755)
		j := filepath.Join(dir, "events.jsonl")
		os.WriteFile(j, []byte("{}\n"), 0o644)
		if r.pid != "" {
			os.WriteFile(filepath.Join(dir, runtime.PIDFile), []byte(r.pid), 0o644)
		}
		os.Chtimes(j, now.Add(-r.age), now.Add(-r.age))
	}
	os.MkdirAll(filepath.Join(runs, "not-a-run"), 0o755)
	ids := func(cutoff time.Time, keep int) string {
		list, err := runtime.OldRuns(runs, cutoff, keep)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, r := range list {
			out = append(out, r.ID)
		}
		return strings.Join(out, " ")
	}
	week := now.Add(-7 * 24 * time.Hour)
	for _, c := range []struct {
		cutoff time.Time
		keep   int
		want   string
	}{
		{week, 0, "b-dead a-oldest"},
		{week, 3, "a-oldest"},
		{now, 0, "d-new b-dead a-oldest"},
		{now.Add(-100 * 24 * time.Hour), 0, ""},
	} {
		if got := ids(c.cutoff, c.keep); got != c.want {
			t.Errorf("OldRuns(cutoff %s ago, keep %d) = %q, want %q", now.Sub(c.cutoff).Round(time.Hour), c.keep, got, c.want)
		}
	}
	if ok, err := runtime.RemoveRun(filepath.Join(runs, "c-live")); ok || err != nil {
		t.Fatalf("RemoveRun of a live run: %v %v", ok, err)
	}
	if ok, err := runtime.RemoveRun(filepath.Join(runs, "b-dead")); !ok || err != nil {
		t.Fatalf("RemoveRun of a dead run: %v %v", ok, err)
	}
	if _, err := os.Stat(filepath.Join(runs, "b-dead")); !os.IsNotExist(err) {
		t.Fatalf("b-dead still there: %v", err)
	}
}
