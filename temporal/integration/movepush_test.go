package integration

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sandgate/sandgate/internal/gitfixture"
	"github.com/sandgate/sandgate/runtime"
	"github.com/sandgate/sandgate/temporal"
	"github.com/sandgate/sandgate/temporal/internal/runfixture"
)

// TestBinaryRunMovesMidPush SIGKILLs the sandgate-temporal worker holding a
// run while its push is in flight (the remote's branch has moved, the
// node's result was never recorded). The run moves to the other worker,
// which rebuilds it from the record and pushes again: the remote's branch
// moved once, to the commit the run recorded, and the push on the new
// host is a no-op success.
func TestBinaryRunMovesMidPush(t *testing.T) {
	c := dial(t)
	q := "bin-movepush"
	workers := map[string]*proc{}
	for _, h := range []string{"host-1", "host-2"} {
		workers[h] = binWorker(t, q, h, t.TempDir())
	}
	repo := gitRepo(t)
	// The remote's hook holds the push for a while after the branch moved.
	remote, updates := filepath.Join(t.TempDir(), "remote.git"), filepath.Join(t.TempDir(), "updates")
	if err := gitfixture.Remote(repo, remote, gitfixture.LogUpdates(updates)+"sleep 8\n"); err != nil {
		t.Fatal(err)
	}
	in := temporal.RunInput{Repo: repo, HostTimeout: 3 * time.Second, HeartbeatTimeout: 2 * time.Second, HandoffWait: time.Second}
	wr := start(t, c, q, runfixture.PushBP(remote), in)
	st := waitFor(t, c, wr, "running its push", func(s temporal.Status) bool { return s.NodeRuns == 4 && s.Host != "" })
	lost := st.Host
	pushed := func() int { n, _ := gitfixture.Updates(updates, runfixture.PushBranch); return n }
	for pushed() == 0 {
		time.Sleep(50 * time.Millisecond) // go test's deadline bounds the wait
	}
	if err := workers[lost].cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	moved := result(t, wr)
	if moved.Status != runtime.StatusSucceeded || moved.Host == lost {
		t.Fatalf("moved run %+v, want succeeded off %s", moved, lost)
	}
	var sha string
	var pushes []runtime.Event
	for _, ev := range journal(t, moved.Dir) {
		switch {
		case ev.Type == runtime.EvNodeFinished && ev.Node == "commit":
			sha, _ = ev.Outputs["commit"].(string)
		case ev.Type == runtime.EvNodeFinished && ev.Node == "push":
			pushes = append(pushes, ev)
		}
	}
	if len(pushes) != 1 || pushes[0].Outputs["pushed"] != false {
		t.Fatalf("push results %+v, want one: the new host's, finding the branch there", pushes)
	}
	if n, log := gitfixture.Updates(updates, runfixture.PushBranch); n != 1 {
		t.Fatalf("the remote's branch moved %d times, want once:\n%s", n, log)
	}
	if tip, err := gitfixture.Git(remote, "rev-parse", runfixture.PushBranch); err != nil || strings.TrimSpace(tip) != sha {
		t.Fatalf("remote %s at %q (%v), want the recorded commit %s", runfixture.PushBranch, tip, err, sha)
	}
}
