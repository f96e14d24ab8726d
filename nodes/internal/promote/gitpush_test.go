//go:build linux

package promote_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/sandgate/sandgate/blueprint"
	"github.com/sandgate/sandgate/nodes"
	"github.com/sandgate/sandgate/nodes/internal/nodetest"
	"github.com/sandgate/sandgate/runtime"
)

const pushOnly = `version: 1
name: push
start: fix
nodes:
  fix: {type: shell, run: "sed -i 's/a - b/a + b/' calc.go", next: test}
  test: {type: test, run: go test -json ./..., on_pass: commit, on_fail: stuck}
  commit: {type: git_commit, branch: fix/add, message: "fix: Add adds", next: push}
  push: {type: git_push, remote: REMOTE, timeout: 3s, on_pass: done, on_fail: refused}
  done: {type: succeed}
  refused: {type: handoff}
  stuck: {type: handoff}
`

// pushRun runs pushOnly against remote with a bound of its own: a push
// that ignored its 3s node timeout would outlive it and fail the test.
func pushRun(t *testing.T, repo, src string, allow ...string) (*runtime.Summary, runtime.Event) {
	t.Helper()
	h := nodetest.NewHarnessWith(t, repo, nodes.Options{AllowEndpoints: allow})
	bp, err := blueprint.Parse("push.yaml", []byte(src), blueprint.WithTypes(h.RT.Registry), blueprint.WithAllowEndpoints(allow...))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	sum, err := h.RT.Run(ctx, bp, runtime.RunOptions{Workspace: repo})
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	for _, ev := range nodetest.ReadEvents(t, sum.Dir) {
		if ev.Type == runtime.EvNodeFinished && ev.Node == "push" {
			return sum, ev
		}
	}
	t.Fatalf("push never finished: %s %s", sum.Status, sum.Reason)
	return nil, runtime.Event{}
}

func hook(t *testing.T, bare, script string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(bare, "hooks", "pre-receive"), []byte("#!/bin/sh\n"+script), 0o755); err != nil {
		t.Fatal(err)
	}
}

func TestPushToEmptyAndUnrelatedRemotes(t *testing.T) {
	repo := nodetest.SeedRepo(t)
	for name, setup := range map[string]func(bare string){
		"empty": func(bare string) { nodetest.Run(t, "", "git", "init", "-q", "--bare", bare) },
		"unrelated history": func(bare string) {
			other := t.TempDir()
			nodetest.Run(t, other, "git", "init", "-q", "-b", "main")
			os.WriteFile(filepath.Join(other, "README"), []byte("another project\n"), 0o644)
			nodetest.Run(t, other, "git", "add", ".")
			nodetest.Run(t, other, "git", "-c", "user.name=o", "-c", "user.email=o@example.com", "commit", "-q", "-m", "unrelated root")
			nodetest.Run(t, "", "git", "clone", "-q", "--bare", other, bare)
		},
	} {
		t.Run(name, func(t *testing.T) {
			bare := filepath.Join(t.TempDir(), "remote.git")
			setup(bare)
			sum, ev := pushRun(t, repo, strings.Replace(pushOnly, "REMOTE", bare, 1))
			if sum.Status != runtime.StatusSucceeded || ev.Outcome != runtime.OutcomePass {
				t.Fatalf("push to an %s remote: %s %s (%s %s)", name, sum.Status, sum.Reason, ev.Feedback, ev.Error)
			}
			if log := nodetest.Run(t, bare, "git", "log", "--format=%s", "fix/add"); log != "fix: Add adds\ncalc with a bug" {
				t.Fatalf("pushed branch: %q", log)
			}
			// Every object the branch needs arrived, not only the new ones.
			nodetest.Run(t, bare, "git", "fsck", "--connectivity-only", "--no-dangling")
		})
	}
}

func TestPushReportsTheRemotesRefusal(t *testing.T) {
	repo := nodetest.SeedRepo(t)
	bare := filepath.Join(t.TempDir(), "remote.git")
	nodetest.Run(t, "", "git", "clone", "-q", "--bare", repo, bare)
	hook(t, bare, "echo 'pre-receive: fix/* branches need a signed-off commit' >&2\nexit 1\n")
	sum, ev := pushRun(t, repo, strings.Replace(pushOnly, "REMOTE", bare, 1))
	t.Logf("feedback: %s", ev.Feedback)
	if ev.Outcome != runtime.OutcomeFail || !strings.Contains(ev.Feedback, "need a signed-off commit") || sum.Status == runtime.StatusSucceeded {
		t.Fatalf("a refused push: %s %q (error %q), run %s", ev.Outcome, ev.Feedback, ev.Error, sum.Status)
	}
	if out := nodetest.Run(t, bare, "git", "branch", "--list", "fix/add"); out != "" {
		t.Fatalf("refused branch exists: %q", out)
	}
	// With only a next edge, a failed push must not carry on as if it
	// had landed: the run fails with the remote's words.
	next := strings.NewReplacer("REMOTE", bare, "on_pass: done, on_fail: refused", "next: done", "  refused: {type: handoff}\n", "").Replace(pushOnly)
	sum, ev = pushRun(t, repo, next)
	if sum.Status != runtime.StatusFailed || !strings.Contains(sum.Reason, "need a signed-off commit") {
		t.Fatalf("a refused push with next: run %s %q (event %s %q)", sum.Status, sum.Reason, ev.Outcome, ev.Error)
	}
}

// TestPushTimesOut pushes to remotes that never answer: a receive-pack
// whose hook sleeps, and a smart-HTTP server that never responds. The
// node must fail on its 3s timeout and leave no process behind.
func TestPushTimesOut(t *testing.T) {
	repo := nodetest.SeedRepo(t)
	t.Run("receive-pack hangs", func(t *testing.T) {
		bare := filepath.Join(t.TempDir(), "hang.git")
		nodetest.Run(t, "", "git", "init", "-q", "--bare", bare)
		pidFile := filepath.Join(t.TempDir(), "hook.pid")
		hook(t, bare, "echo $$ > "+pidFile+"\nexec sleep 600\n")
		_, ev := pushRun(t, repo, strings.Replace(pushOnly, "REMOTE", bare, 1))
		mustTimeOut(t, ev)
		b, err := os.ReadFile(pidFile)
		if err != nil {
			t.Fatalf("the hook never ran: %v", err)
		}
		pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
		mustBeGone(t, func() bool { return alive(pid) }, fmt.Sprintf("the remote's sleeping hook (pid %d)", pid))
		mustBeGone(t, func() bool { return processWith(bare) != "" }, "a git process for "+bare)
	})
	t.Run("smart HTTP never answers", func(t *testing.T) {
		// It asks for the token first, then hangs; while git waits, no
		// process may carry the token in its argv.
		t.Setenv("SANDGATE_TEST_PUSH_TOKEN", "hang-secret-7f3a")
		stop := make(chan struct{})
		var mu sync.Mutex
		var authed bool
		var leak string
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if _, pass, ok := r.BasicAuth(); !ok || pass != "hang-secret-7f3a" {
				w.Header().Set("WWW-Authenticate", `Basic realm="git"`)
				http.Error(w, "unauthorized", http.StatusUnauthorized)
				return
			}
			mu.Lock()
			authed, leak = true, leak+processWith("hang-secret-7f3a")
			mu.Unlock()
			select {
			case <-stop:
			case <-r.Context().Done():
			}
		}))
		defer srv.Close()
		defer close(stop)
		url := srv.URL + "/never.git"
		src := strings.Replace(pushOnly, "remote: REMOTE,", "remote: "+url+", token_env: SANDGATE_TEST_PUSH_TOKEN,", 1)
		_, ev := pushRun(t, repo, src, srv.URL)
		mustTimeOut(t, ev)
		mustBeGone(t, func() bool { return processWith(url) != "" }, "a git process for "+url)
		mu.Lock()
		defer mu.Unlock()
		if !authed || leak != "" {
			t.Fatalf("token reached the server: %v; a command line carrying it: %q", authed, leak)
		}
	})
}

func mustTimeOut(t *testing.T, ev runtime.Event) {
	t.Helper()
	t.Logf("feedback: %s", ev.Feedback)
	if ev.Outcome != runtime.OutcomeFail || !strings.Contains(ev.Feedback, "timed out after 3s") {
		t.Fatalf("push to a hanging remote: %s %q (error %q)", ev.Outcome, ev.Feedback, ev.Error)
	}
}

// mustBeGone waits a bounded while for a killed process to disappear.
func mustBeGone(t *testing.T, exists func() bool, what string) {
	t.Helper()
	for i := 0; i < 100 && exists(); i++ {
		time.Sleep(100 * time.Millisecond)
	}
	if exists() {
		t.Fatalf("%s outlived the push node's timeout", what)
	}
}

// alive reports whether pid runs (a zombie awaiting its reaper is dead).
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return false
	}
	s := string(stat)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

// processWith returns the command line of a live process mentioning s.
func processWith(s string) string {
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		cmd, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && strings.Contains(string(cmd), s) && alive(pid) {
			return strings.ReplaceAll(string(cmd), "\x00", " ")
		}
	}
	return ""
}

// TestAlertForeignPush: a push to a remote of the user's repository
// raises nothing; a push to another repository reaches the operator's
// alert sink, naming it.
func TestAlertForeignPush(t *testing.T) {
	repo := nodetest.SeedRepo(t)
	origin, foreign := filepath.Join(t.TempDir(), "origin.git"), filepath.Join(t.TempDir(), "elsewhere.git")
	for _, bare := range []string{origin, foreign} {
		nodetest.Run(t, "", "git", "init", "-q", "--bare", bare)
	}
	nodetest.Run(t, repo, "git", "remote", "add", "origin", origin)
	rcv := nodetest.NewAlertReceiver(t)
	rt := nodes.NewRuntime(nodes.Config{RunsDir: t.TempDir(), Repo: repo, CacheDir: t.TempDir(), Caches: nodes.GoCaches(), ColdBuilds: true,
		AlertSinks: []nodes.AlertSink{rcv.Sink()}})
	src := strings.Replace(pushOnly, "on_pass: done", "on_pass: again", 1) +
		"  again: {type: git_push, remote: " + foreign + ", on_pass: done, on_fail: refused}\n"
	bp, err := rt.Registry.Parse("push.yaml", []byte(strings.Replace(src, "REMOTE", origin, 1)))
	if err != nil {
		t.Fatal(err)
	}
	sum, err := rt.Run(t.Context(), bp, runtime.RunOptions{Workspace: repo})
	if err != nil || sum.Status != runtime.StatusSucceeded {
		t.Fatalf("run: %v %s (%s)", err, sum.Status, sum.Reason)
	}
	events, _ := rcv.Events()
	if len(events) != 1 || events[0].Kind != "foreign_push" || events[0].Node != "again" || events[0].Fields["repository"] != foreign {
		t.Errorf("alerts %+v, want one foreign_push by again to %s", events, foreign)
	}
}
