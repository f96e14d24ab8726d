package integration

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	sdktemporal "go.temporal.io/sdk/temporal"

	"github.com/sandgate/sandgate/internal/gitfixture"
	"github.com/sandgate/sandgate/nodes"
	"github.com/sandgate/sandgate/runtime"
	"github.com/sandgate/sandgate/temporal"
	"github.com/sandgate/sandgate/temporal/internal/testnodes"
)

func gitRepo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := gitfixture.Seed(dir, map[string]string{"README": "hello\n"}, "init"); err != nil {
		t.Fatal(err)
	}
	return dir
}

// shellBP edits the workspace in one sandboxed shell node and checks the
// edit in the next: the second finds the first's change only if both ran
// in the same workspace, on the same host.
const shellBP = `version: 1
name: shell
start: edit
nodes:
  edit: {type: shell, run: "echo changed > hello.txt", next: check}
  check: {type: shell, run: "grep -q changed hello.txt", on_pass: done, on_fail: broken}
  done: {type: succeed}
  broken: {type: fail, reason: the edit was not there}
`

// TestShellBlueprintEndToEnd runs real sandboxed shell nodes on a worker
// host through the server and checks the run directory reads as a local
// run's: succeeded, sandboxed, a journal the scheduler replays.
func TestShellBlueprintEndToEnd(t *testing.T) {
	c := dial(t)
	startHost(t, c, "e2e", "host-a", true)
	repo := gitRepo(t)
	wr := start(t, c, "e2e", shellBP, temporal.RunInput{Repo: repo, SearchAttributes: true})
	st := result(t, wr)
	if st.Status != runtime.StatusSucceeded || st.Host != "host-a" {
		t.Fatalf("status %+v", st)
	}
	sum, err := runtime.Summarize(st.Dir)
	if err != nil || sum.Status != runtime.StatusSucceeded || len(sum.Sandbox) == 0 || sum.NodeRuns != 2 {
		t.Fatalf("summary %+v %v", sum, err)
	}
	events, _ := runtime.ReadJournal(filepath.Join(st.Dir, "events.jsonl"))
	bp, _ := nodes.NewRegistry().Parse("bp.yaml", []byte(shellBP))
	if err := runtime.Replay(bp, events); err != nil {
		t.Fatal(err)
	}
	// The repository itself is untouched: the edit stayed in the box.
	if _, err := os.Stat(filepath.Join(repo, "hello.txt")); err == nil {
		t.Fatal("the run's edit leaked into the repository")
	}
	d, err := c.DescribeWorkflow(context.Background(), wr.GetID(), "")
	if err != nil {
		t.Fatal(err)
	}
	got, _ := d.TypedSearchAttributes.GetKeyword(sdktemporal.NewSearchAttributeKeyKeyword(temporal.AttrStatus))
	repoAttr, _ := d.TypedSearchAttributes.GetKeyword(sdktemporal.NewSearchAttributeKeyKeyword(temporal.AttrRepository))
	if got != "succeeded" || repoAttr != repo {
		t.Fatalf("search attributes: status %q, repository %q", got, repoAttr)
	}
	if *update {
		writeHistory(t, history(t, c, wr.GetID(), ""), filepath.Join("..", "testdata", "histories", goldenVersion+"-shell.json"))
	}
}

// sleepers returns the processes whose command line is "sleep 317".
func sleepers(*testing.T) []string { return procsWith("sleep", "317") }

// TestCancelKillsBoxCommand cancels the workflow while a shell node's box
// runs a long command and fails if the command survives the run.
func TestCancelKillsBoxCommand(t *testing.T) {
	c := dial(t)
	startHost(t, c, "cancel", "host-c", true)
	bp := strings.Replace(shellBP, `run: "echo changed > hello.txt"`, `run: "sleep 317"`, 1)
	wr := start(t, c, "cancel", bp, temporal.RunInput{Repo: gitRepo(t)})
	deadline := time.Now().Add(time.Minute)
	for len(sleepers(t)) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the box command never started")
		}
		time.Sleep(50 * time.Millisecond)
	}
	t0 := time.Now()
	if err := c.CancelWorkflow(context.Background(), wr.GetID(), ""); err != nil {
		t.Fatal(err)
	}
	for len(sleepers(t)) > 0 && time.Since(t0) < 30*time.Second {
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("box command gone %s after the cancel", time.Since(t0).Round(time.Millisecond))
	st := result(t, wr)
	if left := sleepers(t); len(left) > 0 {
		t.Fatalf("box command still running after the run ended: %v", left)
	}
	if st.Status != runtime.StatusCanceled {
		t.Fatalf("status %+v", st)
	}
	sum, err := runtime.Summarize(st.Dir)
	if err != nil || sum.Status != runtime.StatusCanceled {
		t.Fatalf("summary %+v %v", sum, err)
	}
}

const handoffBP = `version: 1
name: ask
start: work
nodes:
  work: {type: step, next: gate}
  gate: {type: step, outcomes: [handoff, pass], on_pass: done, on_fail: done}
  done: {type: succeed}
`

// TestHandoffAnsweredBySignal: a handed-off run waits (no activity runs
// meanwhile), an answer signal continues it to success on its host.
func TestHandoffAnsweredBySignal(t *testing.T) {
	c := dial(t)
	startHost(t, c, "ask", "host-h", false)
	wr := start(t, c, "ask", handoffBP, temporal.RunInput{Repo: t.TempDir()})
	st := waitFor(t, c, wr, "waiting for an answer", func(s temporal.Status) bool { return s.Waiting })
	if st.Status != runtime.StatusHandedOff || !strings.Contains(st.Reason, "scripted hand-off") {
		t.Fatalf("waiting with %+v", st)
	}
	if _, err := os.Stat(filepath.Join(st.Dir, "handoff.md")); err != nil {
		t.Fatalf("no hand-off report while waiting: %v", err)
	}
	if err := temporal.SendAnswer(context.Background(), c, wr.GetID(), temporal.Answer{Node: "gate", Note: "looks fine", By: "ann"}); err != nil {
		t.Fatal(err)
	}
	st = result(t, wr)
	if st.Status != runtime.StatusSucceeded || st.Answers != 1 {
		t.Fatalf("after the answer: %+v", st)
	}
	sum, err := runtime.Summarize(st.Dir)
	if err != nil || sum.Status != runtime.StatusSucceeded || len(sum.Answers) != 1 || sum.Answers[0].By != "ann" {
		t.Fatalf("summary %+v %v", sum, err)
	}
}

// TestWorkerLostHandsOff stops the host running a node mid-activity while
// another host stays up. The test nodes' environment cannot record and
// re-apply its change (no Patch/Apply), so the run cannot move: it must be
// handed off naming the lost host and why, not continued on the other host
// without its workspace.
func TestWorkerLostHandsOff(t *testing.T) {
	c := dial(t)
	hosts := map[string]*host{"host-1": startHost(t, c, "lost", "host-1", false), "host-2": startHost(t, c, "lost", "host-2", false)}
	bp := "version: 1\nname: long\nstart: s1\nnodes:\n  s1: {type: step, sleep: 1h, next: done}\n  done: {type: succeed}\n"
	wr := start(t, c, "lost", bp, temporal.RunInput{Repo: t.TempDir(), HostTimeout: 3 * time.Second, HeartbeatTimeout: 2 * time.Second, HandoffWait: time.Second})
	st := waitFor(t, c, wr, "running its node", func(s temporal.Status) bool { return s.NodeRuns == 1 && s.Host != "" })
	time.Sleep(500 * time.Millisecond) // let the attempt start on its host
	hosts[st.Host].stop()
	st = result(t, wr)
	want := "worker host " + st.Host + " lost; the workspace was on it"
	if st.Status != runtime.StatusHandedOff || st.Kind != "workspace_lost" || !strings.HasPrefix(st.Reason, want) ||
		!strings.Contains(st.Reason, "cannot be rebuilt") {
		t.Fatalf("got %+v, want handed off: %s", st, want)
	}
	for name, h := range hosts {
		if name != st.Host && h.h.Runs() != 0 {
			t.Fatalf("host %s took over the run without its workspace", name)
		}
	}
}

// TestHundredRunsTwoHosts runs 100 five-node runs at once across two
// hosts; every run must succeed on one host with its record there.
func TestHundredRunsTwoHosts(t *testing.T) {
	c := dial(t)
	startHost(t, c, "many", "host-x", false)
	startHost(t, c, "many", "host-y", false)
	var runs []client.WorkflowRun
	for i := 0; i < 100; i++ {
		runs = append(runs, start(t, c, "many", testnodes.Chain(5), temporal.RunInput{Repo: t.TempDir()}))
	}
	per := map[string]int{}
	for _, r := range runs {
		st := result(t, r)
		if st.Status != runtime.StatusSucceeded || st.NodeRuns != 5 {
			t.Fatalf("run %s: %+v", r.GetID(), st)
		}
		sum, err := runtime.Summarize(st.Dir)
		if err != nil || sum.Status != runtime.StatusSucceeded {
			t.Fatalf("run %s record: %+v %v", r.GetID(), sum, err)
		}
		per[st.Host]++
	}
	t.Logf("runs per host: %v", per)
}
