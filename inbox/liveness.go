package inbox

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"syscall"

	"github.com/sandgate/sandgate/runtime"
)

// statusStopped is shown for a run whose journal says running while no
// process carries it on: its harness crashed or was killed. The journal
// cannot say so itself; the run's pid file (written when a harness opens
// the run, removed after run_closed) can.
const statusStopped = "stopped"

// harnessGone reports why no process carries the run in root on: its pid
// file is missing or names a process that is gone. A pid the inbox may
// not signal (another user's run) is alive.
func harnessGone(root *os.Root) (string, bool) {
	b, _, err := readCapped(root, "pid", 64)
	if err != nil {
		return "no process: the run has no pid file and no run_finished (its harness died); sandgate resume continues it", true
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 {
		return "no process: its pid file holds no pid", true
	}
	if err := syscall.Kill(pid, 0); err == nil || errors.Is(err, syscall.EPERM) {
		return "", false
	}
	return "no process: pid " + strconv.Itoa(pid) + " is gone without run_finished (its harness died); sandgate resume continues it", true
}

// markStopped turns an unfinished run whose harness is gone into
// "stopped". A journal with no event yet is a run starting: its pid file
// comes before its first event.
func markStopped(v *runView, root *os.Root) {
	if v.Status != string(runtime.StatusRunning) || v.finished || v.Last.IsZero() {
		return
	}
	if why, gone := harnessGone(root); gone {
		v.Status, v.Reason = statusStopped, why
	}
}

// liveStatus is the status and reason of an unfinished run now: running,
// or stopped when its harness is gone.
func liveStatus(runs *os.Root, name string) (string, string) {
	r, err := runs.OpenRoot(name)
	if err != nil {
		return string(runtime.StatusRunning), ""
	}
	defer r.Close()
	if why, gone := harnessGone(r); gone {
		return statusStopped, why
	}
	return string(runtime.StatusRunning), ""
}
