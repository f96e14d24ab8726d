package integration

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sandgate/sandgate/internal/gitfixture"
	"github.com/sandgate/sandgate/runtime"
	"github.com/sandgate/sandgate/temporal"
)

// pushBP commits a judged change and pushes it to a remote on disk whose
// post-receive hook holds the push for a while after the branch moved.
const pushBP = `version: 1
name: movepush
start: edit
nodes:
  edit: {type: shell, run: "echo changed > README", next: guard}
  guard: {type: protect, paths: ["ci/**"], on_pass: commit, on_fail: stuck}
  commit: {type: git_commit, branch: fix/readme, message: "fix the README", next: push}
  push: {type: git_push, remote: REMOTE, on_pass: done, on_fail: stuck}
  done: {type: succeed}
  stuck: {type: handoff}
`

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
	remote := filepath.Join(t.TempDir(), "remote.git")
	if _, err := gitfixture.Git(t.TempDir(), "clone", "-q", "--bare", repo, remote); err != nil {
		t.Fatal(err)
	}
	updates := filepath.Join(t.TempDir(), "updates")
	hook := "#!/bin/sh\ncat >> " + updates + "\nsleep 8\n"
	if err := os.WriteFile(filepath.Join(remote, "hooks", "post-receive"), []byte(hook), 0o755); err != nil {
		t.Fatal(err)
	}
	in := temporal.RunInput{Repo: repo, HostTimeout: 3 * time.Second, HeartbeatTimeout: 2 * time.Second, HandoffWait: time.Second}
	wr := start(t, c, q, strings.ReplaceAll(pushBP, "REMOTE", remote), in)
	st := waitFor(t, c, wr, "running its push", func(s temporal.Status) bool { return s.NodeRuns == 4 && s.Host != "" })
	lost := st.Host
	for !strings.Contains(readFile(updates), "refs/heads/fix/readme") {
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
	if n := strings.Count(readFile(updates), "refs/heads/fix/readme"); n != 1 {
		t.Fatalf("the remote's branch moved %d times, want once:\n%s", n, readFile(updates))
	}
	if tip, err := gitfixture.Git(remote, "rev-parse", "fix/readme"); err != nil || strings.TrimSpace(tip) != sha {
		t.Fatalf("remote fix/readme at %q (%v), want the recorded commit %s", tip, err, sha)
	}
}

func readFile(p string) string {
	b, _ := os.ReadFile(p)
	return string(b)
}
