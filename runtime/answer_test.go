package runtime_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sandgate/sandgate/blueprint"
	"github.com/sandgate/sandgate/internal/wait"
	"github.com/sandgate/sandgate/runtime"
)

// answerBlueprint: implement writes its feedback into the workspace, check
// passes once the workspace holds "use v2". Nothing in the run ever says
// "use v2", so only a person's answer can make it succeed.
const answerBlueprint = `version: 1
name: answer
budget: {answers: 2}
start: implement
nodes:
  implement: {type: writer, next: check}
  check: {type: picky, want: use v2, on_pass: done, on_fail: {to: implement, max: 1}}
  done: {type: succeed}
`

// writerNode appends its feedback to notes.txt in the workspace; feedback
// containing "SLEEP" makes it wait (for the crash test) unless
// SANDGATE_NO_SLEEP is set.
type writerNode struct{}

func (writerNode) Run(ctx context.Context, in *runtime.Input) (*runtime.Result, error) {
	mark(in.Workspace, in.NodeID)
	f, err := os.OpenFile(filepath.Join(in.Workspace, "notes.txt"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, err
	}
	_, err = f.WriteString(in.Feedback + "\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	if strings.Contains(in.Feedback, "SLEEP") && os.Getenv("SANDGATE_NO_SLEEP") == "" {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	return &runtime.Result{Outcome: runtime.OutcomePass}, nil
}

// pickyNode passes once notes.txt holds its want string.
type pickyNode struct{ want string }

func (n pickyNode) Run(_ context.Context, in *runtime.Input) (*runtime.Result, error) {
	mark(in.Workspace, in.NodeID)
	b, _ := os.ReadFile(filepath.Join(in.Workspace, "notes.txt"))
	if strings.Contains(string(b), n.want) {
		return &runtime.Result{Outcome: runtime.OutcomePass}, nil
	}
	return &runtime.Result{Outcome: runtime.OutcomeFail, Feedback: "notes.txt lacks the words check wants"}, nil
}

func answerRegistry(t testing.TB) *runtime.Registry {
	r := testRegistry(t)
	types := []runtime.Type{
		{Spec: blueprint.NodeType{Name: "writer"}, New: func(*blueprint.Node) (runtime.Node, error) { return writerNode{}, nil }},
		{Spec: blueprint.NodeType{Name: "picky", Fields: map[string]blueprint.Field{"want": {Kind: blueprint.KindString, Required: true}}},
			New: func(spec *blueprint.Node) (runtime.Node, error) {
				return pickyNode{want: spec.Config["want"].(string)}, nil
			}},
	}
	for _, typ := range types {
		if err := r.Register(typ); err != nil {
			panic(err)
		}
	}
	return r
}

// envLog records how each run's environment was prepared and discarded.
type envLog struct{ prepared, discarded []string }

func (l *envLog) prepare(ws string) runtime.Prepare {
	return func(_ context.Context, _ string, _ *blueprint.Blueprint, resume bool) (*runtime.Environment, error) {
		l.prepared = append(l.prepared, map[bool]string{false: "fresh", true: "resume"}[resume])
		return &runtime.Environment{Workspace: ws, Discard: func() error { l.discarded = append(l.discarded, "discard"); return nil }}, nil
	}
}

type answerFixture struct {
	rt  *runtime.Runtime
	bp  *blueprint.Blueprint
	ws  string
	env *envLog
}

func newAnswerFixture(t *testing.T, src string) *answerFixture {
	t.Helper()
	reg := answerRegistry(t)
	bp, err := blueprint.Parse("answer.yaml", []byte(src), blueprint.WithTypes(reg))
	if err != nil {
		t.Fatal(err)
	}
	f := &answerFixture{bp: bp, ws: t.TempDir(), env: &envLog{}}
	f.rt = &runtime.Runtime{Registry: reg, RunsDir: t.TempDir(), CancelPoll: 10 * time.Millisecond, Prepare: f.env.prepare(f.ws)}
	return f
}

// handedOff runs the blueprint until its hand-off.
func (f *answerFixture) handedOff(t *testing.T) *runtime.Summary {
	t.Helper()
	sum, err := f.rt.Run(context.Background(), f.bp, runtime.RunOptions{RunID: "r1", Workspace: f.ws})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Status != runtime.StatusHandedOff {
		t.Fatalf("first leg: %s (%s)", sum.Status, sum.Reason)
	}
	return sum
}

func (f *answerFixture) journal(t *testing.T, dir string) []runtime.Event {
	t.Helper()
	events, err := runtime.ReadJournal(filepath.Join(dir, "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	return events
}

// TestAnswerContinuesHandedOffRun: the gate cannot pass until a person's
// note reaches the workspace; the answer carries it there and the run
// succeeds, with every attempt and the answer on record.
func TestAnswerContinuesHandedOffRun(t *testing.T) {
	f := newAnswerFixture(t, answerBlueprint)
	sum := f.handedOff(t)
	if len(f.env.discarded) != 0 {
		t.Fatal("the handed-off run's state was discarded: an answer could not continue on it")
	}
	got, err := f.rt.Answer(context.Background(), sum.Dir, runtime.Answer{Node: "implement", Note: "please use v2", By: "ana"})
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != runtime.StatusSucceeded || len(got.Answers) != 1 {
		t.Fatalf("after the answer: %s (%s), answers %+v", got.Status, got.Reason, got.Answers)
	}
	if a := got.Answers[0]; a.Node != "implement" || a.By != "ana" || a.Note != "please use v2" || a.Time.IsZero() {
		t.Fatalf("answer on record: %+v", a)
	}
	// implement 1, 2 then 3 with the note; check 1, 2 failed, 3 passed.
	var timeline []string
	for _, a := range got.Attempts {
		timeline = append(timeline, fmt.Sprintf("%s#%d:%s", a.Node, a.Attempt, a.Outcome))
	}
	want := "implement#1:pass check#1:fail implement#2:pass check#2:fail implement#3:pass check#3:pass"
	if strings.Join(timeline, " ") != want {
		t.Fatalf("timeline %v, want %s", timeline, want)
	}
	// The answered attempt was given the note, on the same workspace.
	if notes, _ := os.ReadFile(filepath.Join(f.ws, "notes.txt")); !strings.HasSuffix(string(notes), "\nplease use v2\n") {
		t.Fatalf("notes.txt after the answer:\n%s", notes)
	}
	if len(f.env.prepared) != 2 || f.env.prepared[1] != "resume" || len(f.env.discarded) != 1 {
		t.Fatalf("environment: prepared %v, discarded %v", f.env.prepared, f.env.discarded)
	}
	if _, err := os.Stat(filepath.Join(sum.Dir, "handoff.md")); !os.IsNotExist(err) {
		t.Fatalf("a stale hand-off report survived the answer: %v", err)
	}
	events := f.journal(t, sum.Dir)
	if err := runtime.Replay(f.bp, events); err != nil {
		t.Fatalf("replay across the answer: %v", err)
	}
	// The note drives the decisions: a journal whose answer says something
	// else does not replay.
	for i := range events {
		if events[i].Type == runtime.EvAnswered {
			events[i].Feedback = "something else"
		}
	}
	if err := runtime.Replay(f.bp, events); err == nil || !strings.Contains(err.Error(), "diverged") {
		t.Fatalf("replay of a forged answer: %v", err)
	}
	// A succeeded run is not answered again, and nothing runs.
	before := executions(t, f.ws)
	if _, err := f.rt.Answer(context.Background(), sum.Dir, runtime.Answer{Node: "implement", Note: "again"}); err == nil ||
		!strings.Contains(err.Error(), "run r1 ended succeeded") {
		t.Fatalf("answering a succeeded run: %v", err)
	}
	if after := executions(t, f.ws); after["implement"] != before["implement"] {
		t.Fatal("a refused answer ran a node")
	}
}

// TestAnswerBudget: each answer has a fresh edge allowance; once
// budget.answers is used up the run refuses further answers by name, and
// its state is discarded since nothing can continue on it.
func TestAnswerBudget(t *testing.T) {
	f := newAnswerFixture(t, answerBlueprint)
	sum := f.handedOff(t)
	for i, note := range []string{"try harder", "still wrong"} {
		got, err := f.rt.Answer(context.Background(), sum.Dir, runtime.Answer{Node: "implement", Note: note})
		if err != nil {
			t.Fatal(err)
		}
		if got.Status != runtime.StatusHandedOff || !strings.Contains(got.Reason, "exhausted after 1") {
			t.Fatalf("answer %d: %s (%s)", i+1, got.Status, got.Reason)
		}
		if got.Answers[i].By == "" {
			t.Fatalf("answer %d has no author: %+v", i+1, got.Answers[i])
		}
	}
	// Each answer ran implement and check twice: a fresh max 1 each time.
	if n := executions(t, f.ws); n["implement"] != 6 || n["check"] != 6 {
		t.Fatalf("executions %v, want implement 6, check 6", n)
	}
	if len(f.env.discarded) != 1 {
		t.Fatalf("discarded %d times, want once, after the last answer allowed", len(f.env.discarded))
	}
	_, err := f.rt.Answer(context.Background(), sum.Dir, runtime.Answer{Node: "implement", Note: "use v2"})
	if err == nil || err.Error() != "run r1 was answered 2 times, budget.answers 2" {
		t.Fatalf("third answer: %v", err)
	}
	_, err = f.rt.Answer(context.Background(), sum.Dir, runtime.Answer{Node: "implemnt", Note: "use v2"})
	if err == nil || !strings.Contains(err.Error(), `did you mean "implement"`) {
		t.Fatalf("typo: %v", err)
	}
}

// TestResumeAfterAnswerCut: a crash right after the answer was journaled
// (before the node it starts was) leaves a journal ending in the answer;
// Resume carries the answer out.
func TestResumeAfterAnswerCut(t *testing.T) {
	f := newAnswerFixture(t, answerBlueprint)
	sum := f.handedOff(t)
	if _, err := f.rt.Answer(context.Background(), sum.Dir, runtime.Answer{Node: "implement", Note: "use v2"}); err != nil {
		t.Fatal(err)
	}
	events := f.journal(t, sum.Dir)
	cut := 0
	for i, ev := range events {
		if ev.Type == runtime.EvAnswered {
			cut = i + 1
		}
	}
	b, _ := os.ReadFile(filepath.Join(sum.Dir, "events.jsonl"))
	lines := strings.SplitAfter(string(b), "\n")
	if err := os.WriteFile(filepath.Join(sum.Dir, "events.jsonl"), []byte(strings.Join(lines[:cut], "")), 0o644); err != nil {
		t.Fatal(err)
	}
	// Only the answered attempt, run again, can bring the note back.
	os.Remove(filepath.Join(f.ws, "notes.txt"))
	if s, _ := runtime.Summarize(sum.Dir); s.Status != runtime.StatusRunning {
		t.Fatalf("a journal ending in an answer summarizes as %s", s.Status)
	}
	got, err := f.rt.Resume(context.Background(), sum.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != runtime.StatusSucceeded || got.Resumes != 1 || len(got.Answers) != 1 {
		t.Fatalf("resumed: %s (%s), resumes %d, answers %d", got.Status, got.Reason, got.Resumes, len(got.Answers))
	}
	if err := runtime.Replay(f.bp, f.journal(t, sum.Dir)); err != nil {
		t.Fatal(err)
	}
}

// answerChild, run in a child process by TestMain, answers the handed-off
// run in dir with a note that makes implement wait until it is killed.
func answerChild(dir string) {
	rt := &runtime.Runtime{Registry: answerRegistry(nil), RunsDir: filepath.Dir(dir)}
	_, err := rt.Answer(context.Background(), dir, runtime.Answer{Node: "implement", Note: "use v2 SLEEP", By: "ana"})
	fmt.Fprintln(os.Stderr, "answer child finished unexpectedly:", err)
	os.Exit(3)
}

// TestResumeAfterSIGKILLDuringAnswer kills a real process while the node an
// answer started is running, then resumes: the answer is not lost, the cut
// attempt runs again under its number, and the run succeeds.
func TestResumeAfterSIGKILLDuringAnswer(t *testing.T) {
	reg := answerRegistry(t)
	bp, err := blueprint.Parse("answer.yaml", []byte(answerBlueprint), blueprint.WithTypes(reg))
	if err != nil {
		t.Fatal(err)
	}
	runs, ws := t.TempDir(), t.TempDir()
	rt := &runtime.Runtime{Registry: reg, RunsDir: runs}
	sum, err := rt.Run(context.Background(), bp, runtime.RunOptions{RunID: "r1", Workspace: ws})
	if err != nil || sum.Status != runtime.StatusHandedOff {
		t.Fatalf("first leg: %v %+v", err, sum)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "SANDGATE_ANSWER_CHILD="+sum.Dir)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// writer appends the note just before it waits.
	if !wait.For(t, func() bool {
		b, _ := os.ReadFile(filepath.Join(ws, "notes.txt"))
		return strings.Contains(string(b), "SLEEP")
	}) {
		cmd.Process.Kill()
		t.Fatal("the answer never started implement")
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	t.Setenv("SANDGATE_NO_SLEEP", "1")
	got, err := rt.Resume(context.Background(), sum.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != runtime.StatusSucceeded || got.Resumes != 1 || len(got.Answers) != 1 || got.Answers[0].By != "ana" {
		t.Fatalf("resumed: %s (%s), resumes %d, answers %+v", got.Status, got.Reason, got.Resumes, got.Answers)
	}
	// implement ran 1, 2, 3 (killed) and 3 again; the timeline has it 3 times.
	if n := executions(t, ws); n["implement"] != 4 || n["check"] != 3 {
		t.Fatalf("executions %v", n)
	}
	var implement int
	for _, a := range got.Attempts {
		if a.Node == "implement" {
			implement++
		}
	}
	if implement != 3 {
		t.Fatalf("implement attempts on record: %d, want 3: %+v", implement, got.Attempts)
	}
	events, _ := runtime.ReadJournal(filepath.Join(sum.Dir, "events.jsonl"))
	if err := runtime.Replay(bp, events); err != nil {
		t.Fatal(err)
	}
}

// TestSummarizeAcrossAnswers: the status is the latest leg's, an answer
// reopens the run, and the hours a run waited for its answer are no part
// of its duration.
func TestSummarizeAcrossAnswers(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	events := []runtime.Event{
		{Type: runtime.EvRunStarted, Time: at(0)},
		{Type: runtime.EvRunFinished, Time: at(time.Second), Status: runtime.StatusHandedOff, Kind: "edge"},
		{Type: runtime.EvRunClosed, Time: at(time.Second)},
		{Type: runtime.EvAnswered, Time: at(time.Hour), Node: "implement", By: "ana", Feedback: "use v2"},
		{Type: runtime.EvRunFinished, Time: at(time.Hour + 2*time.Second), Status: runtime.StatusSucceeded, Kind: "succeed"},
		{Type: runtime.EvRunClosed, Time: at(time.Hour + 2*time.Second)},
	}
	dir := t.TempDir()
	var b strings.Builder
	for i, ev := range events {
		ev.Seq = i + 1
		j, _ := json.Marshal(ev)
		b.Write(append(j, '\n'))
	}
	if err := os.WriteFile(filepath.Join(dir, "events.jsonl"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		upto   int
		status runtime.Status
		ms     int64
	}{{3, runtime.StatusHandedOff, 1000}, {4, runtime.StatusRunning, 1000}, {6, runtime.StatusSucceeded, 3000}} {
		lines := strings.SplitAfter(b.String(), "\n")
		os.WriteFile(filepath.Join(dir, "events.jsonl"), []byte(strings.Join(lines[:c.upto], "")), 0o644)
		s, err := runtime.Summarize(dir)
		if err != nil {
			t.Fatal(err)
		}
		if s.Status != c.status || s.DurationMS != c.ms {
			t.Errorf("%d events: %s, %d ms; want %s, %d ms", c.upto, s.Status, s.DurationMS, c.status, c.ms)
		}
	}
}

// TestAnswerTimeoutCountsFromAnswer: a run handed off an hour ago (its
// journal's clock moved back) is answered under a one-minute timeout; the
// timeout counts from the answer, so the run is not timed out at once.
func TestAnswerTimeoutCountsFromAnswer(t *testing.T) {
	f := newAnswerFixture(t, strings.Replace(answerBlueprint, "budget: {answers: 2}", "budget: {answers: 2, timeout: 1m}", 1))
	sum := f.handedOff(t)
	path := filepath.Join(sum.Dir, "events.jsonl")
	events := f.journal(t, sum.Dir)
	var b strings.Builder
	for _, ev := range events {
		ev.Time = ev.Time.Add(-time.Hour)
		line, _ := json.Marshal(ev)
		b.Write(append(line, '\n'))
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := f.rt.Answer(context.Background(), sum.Dir, runtime.Answer{Node: "implement", Note: "use v2"})
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != runtime.StatusSucceeded {
		t.Fatalf("answered run an hour after its start: %s (%s)", got.Status, got.Reason)
	}
}
