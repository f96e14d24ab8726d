package integration

import (
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sandgate/sandgate/runtime"
	"github.com/sandgate/sandgate/temporal"
)

// moveBP edits the workspace, then a slow node the test kills its host
// under, then a check that finds both edits only if the first one came
// along to the new host.
const moveBP = `version: 1
name: move
start: edit
nodes:
  edit: {type: shell, run: "echo changed > hello.txt", next: slow}
  slow: {type: shell, run: "sleep 8; echo slow >> hello.txt", next: check}
  check: {type: shell, run: "grep -q changed hello.txt && grep -q slow hello.txt", on_pass: done, on_fail: broken}
  done: {type: succeed}
  broken: {type: fail, reason: the change was lost}
`

// TestBinaryRunMovesOnHostKill runs two sandgate-temporal worker processes,
// SIGKILLs the one holding a run while its slow node runs, and checks the
// run finishes on the other host with the result an undisturbed run has:
// the same node outcomes, the first node not run again, the slow one run
// again once.
func TestBinaryRunMovesOnHostKill(t *testing.T) {
	c := dial(t)
	q := "bin-move"
	workers := map[string]*proc{}
	for _, h := range []string{"host-1", "host-2"} {
		workers[h] = binWorker(t, q, h, t.TempDir())
	}
	in := temporal.RunInput{Repo: gitRepo(t), HostTimeout: 3 * time.Second, HeartbeatTimeout: 2 * time.Second, HandoffWait: time.Second}
	calm := result(t, start(t, c, q, moveBP, in))
	if calm.Status != runtime.StatusSucceeded {
		t.Fatalf("undisturbed run: %+v", calm)
	}
	wr := start(t, c, q, moveBP, in)
	st := waitFor(t, c, wr, "running its slow node", func(s temporal.Status) bool { return s.NodeRuns == 2 && s.Host != "" })
	lost := st.Host
	time.Sleep(time.Second) // let the attempt start in its box
	if err := workers[lost].cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	moved := result(t, wr)
	if moved.Status != runtime.StatusSucceeded || moved.Host == lost || moved.NodeRuns != calm.NodeRuns {
		t.Fatalf("moved run %+v, want succeeded off %s like %+v", moved, lost, calm)
	}
	got, want := outcomes(t, moved.Dir), outcomes(t, calm.Dir)
	if !slices.Equal(got, want) {
		t.Fatalf("moved run's node results %v, undisturbed %v", got, want)
	}
	n := 0
	for _, ev := range journal(t, moved.Dir) {
		if ev.Type == runtime.EvRunResumed && strings.Contains(ev.Reason, "host "+lost+" lost") {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("%d moves recorded, want 1", n)
	}
}

// outcomes lists a run's node results in order, as node:outcome.
func outcomes(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	for _, ev := range journal(t, dir) {
		if ev.Type == runtime.EvNodeFinished {
			out = append(out, ev.Node+":"+string(ev.Outcome)+ev.Error)
		}
	}
	return out
}
