package credential_test

import (
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sandgate/sandgate/internal/wait"
	"github.com/sandgate/sandgate/nodes"
	"github.com/sandgate/sandgate/nodes/internal/nodetest"
	"github.com/sandgate/sandgate/runtime"
)

// TestAttackKilledHarnessMidPush pulls the plug the hard way: a harness
// process (this test binary again) is killed with SIGKILL while the git
// server holds its push, so nothing of it closes a lease or an
// environment. Its token is live then; the resume that follows revokes
// it from the ledger before anything runs (GitHub answers 401), pushes
// with a token of its own, and revokes that one too.
func TestAttackKilledHarnessMidPush(t *testing.T) {
	if os.Getenv("SANDGATE_TEST_KILLED_HARNESS") != "" {
		killedHarness(t)
		return
	}
	var pushes atomic.Int32
	holding := make(chan struct{}, 1)
	release := make(chan struct{})
	hold := func(r *http.Request) {
		if r.Method == http.MethodPost && pushes.Add(1) == 1 {
			holding <- struct{}{}
			select {
			case <-r.Context().Done():
			case <-release:
			}
		}
	}
	a := newAppRun(t, hold)
	t.Cleanup(func() { close(release) })
	src := filepath.Join(t.TempDir(), "flow.yaml")
	if err := os.WriteFile(src, []byte(a.src), 0o600); err != nil {
		t.Fatal(err)
	}
	runs := a.h.RT.RunsDir
	cmd := exec.Command(os.Args[0], "-test.run=^TestAttackKilledHarnessMidPush$", "-test.timeout=10m")
	// The child's temporary directories (its t.TempDir, the box's state)
	// go under one of ours: killed, it cleans up nothing itself.
	cmd.Env = append(os.Environ(), "SANDGATE_TEST_KILLED_HARNESS="+strings.Join([]string{src, a.h.Repo, runs, a.git.URL, a.gh.API.URL}, "\n"),
		"TMPDIR="+t.TempDir())
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-holding:
	case <-time.After(8 * time.Minute):
		cmd.Process.Kill()
		t.Fatal("the child harness never pushed")
	}
	minted := a.gh.Minted()
	if len(minted) != 1 || a.gh.TokenStatus(minted[0].Token, "acme/calc", "contents", "write") != http.StatusOK {
		t.Fatalf("mid-push: %d tokens minted, or the push's is not live", len(minted))
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	if got := a.gh.TokenStatus(minted[0].Token, "", "", ""); got != http.StatusOK {
		t.Fatalf("the killed harness revoked its token (%d): the attack proves nothing", got)
	}
	dirs, _ := filepath.Glob(filepath.Join(runs, "*", "events.jsonl"))
	if len(dirs) != 1 {
		t.Fatalf("run directories: %v", dirs)
	}
	wait.Until(t, "the killed run no longer counts as alive", func() bool {
		alive, _ := runtime.Alive(filepath.Dir(dirs[0]))
		return !alive
	})
	sum, err := a.h.RT.Resume(context.Background(), filepath.Dir(dirs[0]))
	if err != nil {
		t.Fatal(err)
	}
	if sum.Status != runtime.StatusSucceeded {
		t.Fatalf("resumed run %s: %s", sum.Status, sum.Reason)
	}
	toks := a.mustBeDead(t)
	if len(toks) < 3 { // the killed push's, the resumed push's, the review's
		t.Fatalf("minted %d tokens", len(toks))
	}
	mustNotHold(t, sum.Dir, toks)
}

// killedHarness is the child: it runs the flow until it is killed.
func killedHarness(t *testing.T) {
	f := strings.Split(os.Getenv("SANDGATE_TEST_KILLED_HARNESS"), "\n")
	src, _ := os.ReadFile(f[0])
	h := nodetest.NewHarnessWith(t, f[1], nodes.Options{AllowEndpoints: []string{f[3], f[4]}})
	h.RT.RunsDir = f[2]
	h.Run(t, string(src), nil)
	t.Fatal("the child harness finished; it was to be killed mid-push")
}
