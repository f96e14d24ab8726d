package review_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sandgate/sandgate/nodes"
	"github.com/sandgate/sandgate/nodes/internal/nodetest"
	"github.com/sandgate/sandgate/nodes/internal/review"
	"github.com/sandgate/sandgate/runtime"
)

// restartRuntime is the harness a crashed run and its resume share.
func restartRuntime(runs, repo, cache string) *runtime.Runtime {
	return &runtime.Runtime{Registry: nodes.NewRegistryWith(nodes.Options{}), RunsDir: runs,
		Prepare: nodes.Environment(nodes.EnvOptions{Repo: repo, CacheDir: cache, Caches: nodes.GoCaches()})}
}

// reviewChild runs waitShellFlow as run "waiting" until it is killed.
func reviewChild(spec string) {
	p := strings.Split(spec, "|")
	review.FastReviewPolling(nil)
	rt := restartRuntime(p[0], p[1], p[2])
	bp, err := rt.Registry.Parse("wait.yaml", []byte(strings.NewReplacer("REVIEWS", p[3], "WAIT", "1h").Replace(waitShellFlow)))
	if err == nil {
		_, err = rt.Run(context.Background(), bp, runtime.RunOptions{RunID: "waiting", Workspace: p[1]})
	}
	fmt.Fprintln(os.Stderr, "review child finished unexpectedly:", err)
	os.Exit(3)
}

// TestReviewWaitSurvivesRestart kills the harness (SIGKILL, a real
// process) while its review node waits, then resumes the run: the node
// runs again from the top and must find the same entry, not queue another,
// and keep the wait's original start, so a restart never extends the
// reviewers' deadline. Approving then finishes the resumed run.
func TestReviewWaitSurvivesRestart(t *testing.T) {
	defer review.FastReviewPolling(nil)()
	runs, repo, cache := t.TempDir(), nodetest.SeedRepo(t), t.TempDir()
	q := &nodes.ReviewQueue{Dir: t.TempDir()}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "SANDGATE_REVIEW_CHILD="+strings.Join([]string{runs, repo, cache, q.Dir}, "|"))
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	before := waitEntry(t, q, func(e nodes.ReviewEntry) bool { return e.Waiting })
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	state := filepath.Join(runs, "waiting", "review-review.json")
	stateBefore, err := os.ReadFile(state)
	if err != nil {
		t.Fatal(err)
	}
	// The killed node left Waiting set; clear it to see the resumed node
	// set it again.
	d, _ := q.Get(before.ID)
	d.Entry.Waiting = false
	nodetest.WriteEntry(t, q.Dir, before.ID, d.Entry)

	done := make(chan *runtime.Summary, 1)
	go func() {
		sum, err := restartRuntime(runs, repo, cache).Resume(context.Background(), filepath.Join(runs, "waiting"))
		if err != nil {
			t.Errorf("resume: %v", err)
		}
		done <- sum
	}()
	select {
	case sum := <-done:
		b, _ := os.ReadFile(filepath.Join(runs, "waiting", "events.jsonl"))
		t.Fatalf("the resumed run ended without waiting: %+v\n%s", sum, b)
	case <-entryWaiting(q):
	}
	after := waitEntry(t, q, func(e nodes.ReviewEntry) bool { return e.Waiting })
	if stateAfter, _ := os.ReadFile(state); after.Commit != before.Commit || !after.WaitSince.Equal(before.WaitSince) ||
		!after.WaitUntil.Equal(before.WaitUntil) || string(stateAfter) != string(stateBefore) {
		t.Fatalf("the resumed wait restarted the clock: before %+v (%s), after %+v (%s)", before, stateBefore, after, stateAfter)
	}
	if _, err := q.Approve(context.Background(), after.ID, "", "alice"); err != nil {
		t.Fatal(err)
	}
	sum := <-done
	if sum == nil || sum.Status != runtime.StatusSucceeded || sum.Resumes != 1 {
		t.Fatalf("resumed run: %+v", sum)
	}
	if es, _ := q.List(); len(es) != 1 {
		t.Fatalf("the resumed run queued another entry: %+v", es)
	}
}

// entryWaiting is closed once the queue's entry says a run waits.
func entryWaiting(q *nodes.ReviewQueue) <-chan struct{} {
	c := make(chan struct{})
	go func() {
		defer close(c)
		for limit := time.Now().Add(3 * time.Minute); time.Now().Before(limit); time.Sleep(20 * time.Millisecond) {
			if es, _ := q.List(); len(es) == 1 && es[0].Waiting {
				return
			}
		}
	}()
	return c
}
