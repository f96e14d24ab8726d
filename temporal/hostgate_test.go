package temporal

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"

	"github.com/sandgate/sandgate/blueprint"
	"github.com/sandgate/sandgate/internal/gitfixture"
	"github.com/sandgate/sandgate/nodes"
	"github.com/sandgate/sandgate/runtime"
)

// tries registers h's activities in two activity environments: two tries
// of one activity running at once in one worker process, as after the
// server gave up on the first (its heartbeats did not arrive while the
// server restarted) and sent the second to the same host.
func tries(h *Host) [2]*testsuite.TestActivityEnvironment {
	var envs [2]*testsuite.TestActivityEnvironment
	for i := range envs {
		envs[i] = (&testsuite.WorkflowTestSuite{}).NewTestActivityEnvironment()
		envs[i].RegisterActivityWithOptions(h.Open, activity.RegisterOptions{Name: "open"})
		envs[i].RegisterActivityWithOptions(h.Node, activity.RegisterOptions{Name: "node"})
	}
	return envs
}

// TestOpenRetryWaitsForTheEarlierTry: the second try of a run's open on
// the host where the first still prepares the workspace waits for it and
// then finds the run held, instead of failing the run on the first's
// lock ("run is being carried on by another process", which lost runs in
// the chaos soak with a server restart).
func TestOpenRetryWaitsForTheEarlierTry(t *testing.T) {
	repo := t.TempDir()
	if err := gitfixture.Seed(repo, map[string]string{"hello.txt": "hello\n"}, "init"); err != nil {
		t.Fatal(err)
	}
	entered, release := make(chan struct{}), make(chan struct{})
	calls := 0
	h := &Host{Name: "a", Queue: "q@a", Runtime: &runtime.Runtime{Registry: nodes.NewRegistry(), RunsDir: t.TempDir(), NoSync: true},
		Prepare: func(repo, rev string) runtime.Prepare {
			return func(ctx context.Context, dir string, bp *blueprint.Blueprint, resume bool) (*runtime.Environment, error) {
				if calls++; calls == 1 {
					close(entered)
					<-release
				}
				return &runtime.Environment{Workspace: repo}, nil
			}
		}}
	t.Cleanup(func() { _ = h.Close() })
	envs := tries(h)
	in := openInput{RunID: "r", Run: RunInput{File: "bp.yaml", Source: []byte(moveBP), Repo: repo}}
	errs := make(chan error, 2)
	go func() { _, err := execute[openResult](t, envs[0], "open", in); errs <- err }()
	<-entered
	go func() { _, err := execute[openResult](t, envs[1], "open", in); errs <- err }()
	for h.gates.waiting("r") < 2 {
		select {
		case err := <-errs:
			close(release)
			t.Fatalf("the second try ended while the first prepared: %v", err)
		case <-time.After(10 * time.Millisecond):
		}
	}
	close(release)
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatalf("open: %v", err)
		}
	}
	if n := h.Runs(); n != 1 || calls != 1 {
		t.Fatalf("host holds %d runs after %d prepares, want 1 and 1", n, calls)
	}
}

// TestNodeRetryStopsTheEarlierTry: a node's second try on the host where
// its first still runs stops the first (its command killed) before it
// runs the attempt: one attempt never runs twice on one workspace. The
// node's command sleeps on its first run and passes when it finds the
// mark its first run left.
func TestNodeRetryStopsTheEarlierTry(t *testing.T) {
	repo := t.TempDir()
	if err := gitfixture.Seed(repo, map[string]string{"hello.txt": "hello\n"}, "init"); err != nil {
		t.Fatal(err)
	}
	h := sandboxHost(t, (&testsuite.WorkflowTestSuite{}).NewTestActivityEnvironment(), "a")
	envs := tries(h)
	const bp = `version: 1
name: slow
start: slow
nodes:
  slow: {type: shell, run: "test -f once && exit 0; touch once; exec sleep 600", next: done}
  done: {type: succeed}
`
	if _, err := execute[openResult](t, envs[0], "open", openInput{RunID: "r", Run: RunInput{File: "bp.yaml", Source: []byte(bp), Repo: repo}}); err != nil {
		t.Fatal(err)
	}
	in := nodeInput{RunID: "r", Repo: repo, Node: "slow", Attempt: 1,
		Events: []runtime.Event{{Seq: 1, Type: runtime.EvRunStarted, RunID: "r", Blueprint: "slow"}, {Seq: 2, Type: runtime.EvNodeStarted, Node: "slow", Attempt: 1}}}
	first := make(chan error, 1)
	go func() { _, err := execute[nodeResult](t, envs[0], "node", in); first <- err }()
	for {
		h.mu.Lock()
		r := h.runs["r"]
		h.mu.Unlock()
		if ch, err := r.Change(); err == nil && bytes.Contains(ch, []byte("once")) {
			break
		}
		select {
		case err := <-first:
			t.Fatalf("the first try ended before its command ran: %v", err)
		case <-time.After(10 * time.Millisecond):
		}
	}
	second, err := execute[nodeResult](t, envs[1], "node", in)
	if err != nil || second.Event.Outcome != runtime.OutcomePass {
		t.Fatalf("second try: %+v %v", second.Event, err)
	}
	select {
	case err := <-first:
		if err == nil {
			t.Fatal("the first try reported a result after the second ran")
		}
	case <-time.After(time.Minute): // a hang guard: the first sleeps 600 s unless stopped
		t.Fatal("the first try still runs after the second finished")
	}
}

// TestAbandonedOpenKeepsNothing: a try of a run's open that the server
// gave up on while it prepared (its context ended) keeps no copy of the
// run here: the next try may have placed the run on another host, and a
// copy held here would hold its box and a --max-runs slot for nobody.
func TestAbandonedOpenKeepsNothing(t *testing.T) {
	repo := t.TempDir()
	if err := gitfixture.Seed(repo, map[string]string{"hello.txt": "hello\n"}, "init"); err != nil {
		t.Fatal(err)
	}
	ctx, giveUp := context.WithCancel(context.Background())
	defer giveUp()
	h := &Host{Name: "a", Queue: "q@a", Runtime: &runtime.Runtime{Registry: nodes.NewRegistry(), RunsDir: t.TempDir(), NoSync: true},
		Prepare: func(repo, rev string) runtime.Prepare {
			return func(context.Context, string, *blueprint.Blueprint, bool) (*runtime.Environment, error) {
				giveUp() // the server gives up while the workspace is made, which succeeds
				return &runtime.Environment{Workspace: repo}, nil
			}
		}}
	t.Cleanup(func() { _ = h.Close() })
	env := (&testsuite.WorkflowTestSuite{}).NewTestActivityEnvironment()
	env.SetWorkerOptions(worker.Options{BackgroundActivityContext: ctx})
	env.RegisterActivityWithOptions(h.Open, activity.RegisterOptions{Name: "open"})
	res, err := execute[openResult](t, env, "open", openInput{RunID: "r", Run: RunInput{File: "bp.yaml", Source: []byte(moveBP), Repo: repo}})
	if err == nil {
		t.Fatal("an abandoned open reported the run placed here")
	}
	if n := h.Runs(); n != 0 {
		t.Fatalf("host holds %d runs after an abandoned open", n)
	}
	if _, err := os.Stat(filepath.Join(h.runsDir(), "r")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the abandoned run's directory %s is still there (%v)", res.Dir, err)
	}
}
