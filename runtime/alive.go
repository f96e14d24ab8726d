package runtime

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// StatusInterrupted is how a run is shown whose journal has no end while
// no process carries it on: its harness crashed or was killed. It is never
// journaled (the process that would write it is gone); Resume continues
// such a run.
const StatusInterrupted Status = "interrupted"

// PIDFile is the file in a run directory holding the pid of the process
// that carries the run on: written when an execution opens the run,
// removed after run_closed.
const PIDFile = "pid"

// Alive reports whether a process carries the run in dir on; when none
// does, why says so for a person. A process this one may not signal
// (another user's) counts as alive.
func Alive(dir string) (alive bool, why string) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return false, fmt.Sprintf("no process: %v", err)
	}
	defer root.Close()
	return AliveIn(root)
}

// AliveIn is Alive for a run directory opened as root (the inbox reads
// every run through os.Root): the pid file is opened without blocking,
// must be a regular file, and is read up to 64 bytes.
func AliveIn(root *os.Root) (alive bool, why string) {
	f, err := root.OpenFile(PIDFile, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return false, "no process: the run has no pid file and no end (its harness died); sandgate resume continues it"
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		return false, "no process: its pid file is not a regular file"
	}
	b, _ := io.ReadAll(io.LimitReader(f, 64))
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 {
		return false, "no process: its pid file holds no pid"
	}
	if processExists(pid) {
		return true, ""
	}
	return false, "no process: pid " + strconv.Itoa(pid) + " is gone without finishing the run (its harness died); sandgate resume continues it"
}

// MarkInterrupted marks a summary whose run says running while no
// process carries it on as StatusInterrupted, with the reason, and reports
// whether it did.
func (s *Summary) MarkInterrupted() bool {
	if s.Status != StatusRunning {
		return false
	}
	if ok, why := Alive(s.Dir); !ok {
		s.Status, s.Reason = StatusInterrupted, why
		return true
	}
	return false
}

// writePID records this process as the run's carrier, atomically: a
// reader never sees a pid file without its pid.
func writePID(dir string) error {
	tmp := filepath.Join(dir, "."+PIDFile+".tmp")
	if err := os.WriteFile(tmp, []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(dir, PIDFile))
}
