package runtime_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/sandgate/sandgate/blueprint"
	"github.com/sandgate/sandgate/internal/wait"
	"github.com/sandgate/sandgate/runtime"
)

const crashBlueprint = `version: 1
name: crash
start: first
nodes:
  first: {type: script, next: second}
  second: {type: gate, outcomes: [fail, pass], on_pass: slow, on_fail: {to: first, max: 1}}
  slow: {type: script, sleep: 1h, next: last}
  last: {type: script, next: done}
  done: {type: succeed}
`

// TestMain lets the test binary act as a crash victim: with
// SANDGATE_CRASH_CHILD set it runs crashBlueprint until killed, with
// SANDGATE_ANSWER_CHILD it answers a handed-off run until killed.
func TestMain(m *testing.M) {
	if dir := os.Getenv("SANDGATE_ANSWER_CHILD"); dir != "" {
		answerChild(dir)
	}
	if spec := os.Getenv("SANDGATE_CRASH_CHILD"); spec != "" {
		runs, ws, _ := strings.Cut(spec, "|")
		reg := testRegistry(nil)
		bp, err := blueprint.Parse("crash.yaml", []byte(crashBlueprint), blueprint.WithTypes(reg))
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		rt := &runtime.Runtime{Registry: reg, RunsDir: runs}
		_, err = rt.Run(context.Background(), bp, runtime.RunOptions{RunID: "crash", Workspace: ws})
		fmt.Fprintln(os.Stderr, "child finished unexpectedly:", err)
		os.Exit(3)
	}
	os.Exit(m.Run())
}

// TestResumeAfterSIGKILL kills a real process mid-run, resumes the run from
// its journal and checks that it ends as an uninterrupted run would, with no
// completed node run twice.
func TestResumeAfterSIGKILL(t *testing.T) {
	runs, ws := t.TempDir(), t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "SANDGATE_CRASH_CHILD="+runs+"|"+ws)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	journal := filepath.Join(runs, "crash", "events.jsonl")
	// The node records its execution just after the journal says it
	// started: wait for both, or a loaded machine kills it in between.
	if !wait.For(t, func() bool {
		b, _ := os.ReadFile(journal)
		return strings.Contains(string(b), `"type":"node_started","node":"slow"`) && executions(t, ws)["slow"] == 1
	}) {
		cmd.Process.Kill()
		b, _ := os.ReadFile(journal)
		t.Fatalf("child never reached the slow node; journal:\n%s", b)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	before := executions(t, ws)
	if before["first"] != 2 || before["second"] != 2 || before["slow"] != 1 || before["last"] != 0 {
		t.Fatalf("unexpected executions before the crash: %v", before)
	}

	t.Setenv("SANDGATE_NO_SLEEP", "1")
	rt := &runtime.Runtime{Registry: testRegistry(t), RunsDir: runs}
	sum, err := rt.Resume(context.Background(), filepath.Join(runs, "crash"))
	if err != nil {
		t.Fatal(err)
	}
	if sum.Status != runtime.StatusSucceeded || sum.Resumes != 1 {
		t.Fatalf("after resume: %s (%s), resumes %d", sum.Status, sum.Reason, sum.Resumes)
	}
	after := executions(t, ws)
	if after["first"] != 2 || after["second"] != 2 || after["slow"] != 2 || after["last"] != 1 {
		t.Fatalf("completed nodes ran again or cut-off node did not: %v", after)
	}
	// The same attempt number is re-run, so the timeline shows slow once.
	if n := len(sum.Attempts); n != 6 {
		t.Fatalf("want 6 attempts in the timeline, got %d: %+v", n, sum.Attempts)
	}
	bp, _ := blueprint.Load(filepath.Join(runs, "crash", "blueprint.yaml"), blueprint.WithTypes(testRegistry(t)))
	events, _ := runtime.ReadJournal(journal)
	if err := runtime.Replay(bp, events); err != nil {
		t.Fatalf("replay of the resumed journal: %v", err)
	}
	// Resuming a finished run changes nothing.
	again, err := rt.Resume(context.Background(), filepath.Join(runs, "crash"))
	if err != nil || again.Status != runtime.StatusSucceeded || executions(t, ws)["last"] != 1 {
		t.Fatalf("second resume: %v %+v", err, again)
	}
}

func TestJournalTornTail(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "events.jsonl")
	os.WriteFile(p, []byte(`{"seq":1,"type":"run_started"}`+"\n"+`{"seq":2,"type":"node_sta`), 0o644)
	events, err := runtime.ReadJournal(p)
	if err != nil || len(events) != 1 {
		t.Fatalf("torn tail: %v, %d events", err, len(events))
	}
	os.WriteFile(p, []byte(`{"seq":1,"type":"run_started"}`+"\n"+`garbage`+"\n"+`{"seq":3}`+"\n"), 0o644)
	if _, err := runtime.ReadJournal(p); err == nil || !strings.Contains(err.Error(), "events.jsonl:2") {
		t.Fatalf("corrupt middle line: %v", err)
	}
}
