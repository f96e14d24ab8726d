package runtime_test

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sandgate/sandgate/blueprint"
	"github.com/sandgate/sandgate/internal/golden"
	"github.com/sandgate/sandgate/runtime"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/")

// storyNode plays one part of a realistic run by its type: an agent that
// summarizes what it did, a push that publishes its branch, and a test
// gate that keeps failing the same test 150 times over.
type storyNode struct{ typ string }

func (n storyNode) Run(_ context.Context, in *runtime.Input) (*runtime.Result, error) {
	switch n.typ {
	case "agent":
		return &runtime.Result{Outcome: runtime.OutcomePass, Tokens: 1000 * in.Attempt,
			Outputs: map[string]any{"summary": fmt.Sprintf("attempt %d: changed the sign in Add\nand more", in.Attempt), "turns": 3}}, nil
	case "git_push":
		return &runtime.Result{Outcome: runtime.OutcomePass,
			Outputs: map[string]any{"ref": "refs/heads/sandgate/fix", "remote": "/srv/git/calc.git", "pushed": true}}, nil
	}
	var fb strings.Builder
	fb.WriteString("--- FAIL: TestAdd (0.00s)\n")
	for i := range 150 {
		fmt.Fprintf(&fb, "    calc_test.go:%d: Add(%d, 3) = %d, want %d\n", 10+i, i, i-3, i+3)
	}
	fb.WriteString("FAIL\tcalc\t0.01s\n")
	return &runtime.Result{Outcome: runtime.OutcomeFail, Feedback: fb.String(),
		Outputs: map[string]any{"passed": 3, "failed": 1, "failures": []string{"TestAdd"}}}, nil
}

func storyRegistry() *runtime.Registry {
	r := runtime.NewRegistry()
	types := []blueprint.NodeType{
		{Name: "agent", Fields: map[string]blueprint.Field{"prompt": {Kind: blueprint.KindString}},
			Outputs: map[string]blueprint.Kind{"summary": blueprint.KindString, "turns": blueprint.KindInt}},
		{Name: "git_push", Outputs: map[string]blueprint.Kind{"ref": blueprint.KindString, "remote": blueprint.KindString, "pushed": blueprint.KindBool}},
		{Name: "test", Gate: true, Outputs: map[string]blueprint.Kind{"passed": blueprint.KindInt, "failed": blueprint.KindInt, "failures": blueprint.KindStringList}},
	}
	for _, t := range types {
		typ := t.Name
		if err := r.Register(runtime.Type{Spec: t, New: func(*blueprint.Node) (runtime.Node, error) { return storyNode{typ}, nil }}); err != nil {
			panic(err)
		}
	}
	return r
}

const storyBlueprint = `version: 1
name: story
inputs:
  task: {required: true}
  packages: {default: ./...}
start: implement
nodes:
  implement: {type: agent, prompt: "fix ${{ inputs.task }}", next: push}
  push: {type: git_push, next: test}
  test:
    type: test
    edges:
      - {to: done, when: "outputs.test.failed == 0"}
      - {to: implement, max: 1}
  done: {type: succeed}
`

// storyPatch is a git patch with a text and a binary file.
const storyPatch = `diff --git a/calc.go b/calc.go
index 1111111111111111111111111111111111111111..2222222222222222222222222222222222222222 100644
--- a/calc.go
+++ b/calc.go
@@ -1,3 +1,3 @@
 package calc

-func Add(a, b int) int { return a - b }
+func Add(a, b int) int { return a + b }
diff --git a/logo.png b/logo.png
new file mode 100644
index 0000000000000000000000000000000000000000..3333333333333333333333333333333333333333
GIT binary patch
literal 4
LcmZQzWMT#Y01f~L

literal 0
HcmV?d00001

`

// TestHandoffGolden runs a hand-off end to end and compares handoff.md
// with testdata/handoff.golden.md: the outcome, the takeover commands and
// the answer lead, the task and the reason follow as quotations, the
// takeover commands name change.patch and the base commit, the pushed
// branch can be fetched, each attempt says what it did, and 150 similar
// lines of feedback are one line and a count.
func TestHandoffGolden(t *testing.T) {
	reg := storyRegistry()
	bp, err := blueprint.Parse("story.yaml", []byte(storyBlueprint), blueprint.WithTypes(reg))
	if err != nil {
		t.Fatal(err)
	}
	ws := t.TempDir()
	closed, discarded := false, false
	rt := &runtime.Runtime{Registry: reg, RunsDir: t.TempDir(),
		Prepare: func(_ context.Context, dir string, _ *blueprint.Blueprint, _ bool) (*runtime.Environment, error) {
			os.WriteFile(filepath.Join(dir, "base"), []byte("0123456789abcdef0123456789abcdef01234567"), 0o644)
			return &runtime.Environment{Workspace: ws,
				Patch:   func() ([]byte, error) { return []byte(storyPatch), nil },
				Close:   func() error { closed = true; return nil },
				Discard: func() error { discarded = closed; return nil }}, nil
		}}
	sum, err := rt.Run(context.Background(), bp, runtime.RunOptions{Inputs: map[string]any{"task": "make Add add"}, Workspace: ws})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Status != runtime.StatusHandedOff || sum.Kind != "edge" {
		t.Fatalf("%s/%s: %s", sum.Status, sum.Kind, sum.Reason)
	}
	md, err := os.ReadFile(filepath.Join(sum.Dir, "handoff.md"))
	if err != nil {
		t.Fatal(err)
	}
	norm := strings.NewReplacer(sum.Dir, "RUNDIR", ws, "REPO", sum.RunID, "RUNID").Replace(string(md))
	golden.Compare(t, filepath.Join("testdata", "handoff.golden.md"), norm, *update)
	if patch, err := os.ReadFile(filepath.Join(sum.Dir, runtime.PatchFile)); err != nil || string(patch) != storyPatch {
		t.Fatalf("change.patch is not the environment's patch: %v\n%s", err, patch)
	}
	var h runtime.Handoff
	if err := json.Unmarshal(must(os.ReadFile(filepath.Join(sum.Dir, "handoff.json"))), &h); err != nil {
		t.Fatal(err)
	}
	if len(h.Takeover) != 2 || len(h.Fetch) != 2 || h.Task["task"] != "make Add add" || len(h.Tried) != 6 ||
		strings.Join(h.Change.Binary, ",") != "logo.png" || strings.Count(h.LastFeedback, "\n") != 3 {
		t.Fatalf("handoff.json: %+v", h)
	}
	// An answer may still continue the run on its workspace: closed, kept.
	if !closed || discarded {
		t.Errorf("environment closed %v (want true), discarded %v (want false while answers are left)", closed, discarded)
	}
	if h.AnswersLeft != 3 || !strings.Contains(h.Answer, "--to implement") || h.AnswerTo != "implement" {
		t.Errorf("answer hint: %d left, %q, answer_to %q", h.AnswersLeft, h.Answer, h.AnswerTo)
	}
}

// TestHandoffWithoutChange: a run whose environment records no change
// says there is nothing to take over and writes no change.patch; a run
// handed off by the agent says so in words.
func TestHandoffWithoutChange(t *testing.T) {
	f := newFixture(t, retryLoop("[handoff]", ""))
	sum := f.run(t, context.Background(), map[string]any{"task": "x"})
	md := string(must(os.ReadFile(filepath.Join(sum.Dir, "handoff.md"))))
	for _, want := range []string{"## Task\n\n- **task**: `x`", "Step `lint` (gate) asked for a person in attempt 1",
		"```text\nnode lint asked for a person: scripted hand-off\n```", "does not record changes", "`lint` (gate) attempt 1: **handoff**"} {
		if !strings.Contains(md, want) {
			t.Errorf("handoff.md lacks %q:\n%s", want, md)
		}
	}
	if _, err := os.Stat(filepath.Join(sum.Dir, runtime.PatchFile)); !os.IsNotExist(err) {
		t.Errorf("change.patch without a change: %v", err)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// closeWatcher watches a run's directory from its run_closed event on:
// the moment the pid file is gone (watchers then call the run ended), it
// notes whether handoff.json is there.
type closeWatcher struct {
	dir  func() string
	seen chan bool
}

func (c *closeWatcher) Event(ev runtime.Event) {
	if ev.Type != runtime.EvRunClosed {
		return
	}
	dir := c.dir()
	go func() {
		for {
			if _, err := os.Stat(filepath.Join(dir, runtime.PIDFile)); err != nil {
				_, err := os.Stat(filepath.Join(dir, "handoff.json"))
				c.seen <- err == nil
				return
			}
		}
	}()
}

// TestHandoffBeforeThePidFileGoes: a handed-off run's handoff.json is
// written before its pid file goes, so whoever sees the run ended (an
// MCP client's run_status, then show_run) finds the hand-off.
func TestHandoffBeforeThePidFileGoes(t *testing.T) {
	reg := storyRegistry()
	bp, err := blueprint.Parse("story.yaml", []byte(storyBlueprint), blueprint.WithTypes(reg))
	if err != nil {
		t.Fatal(err)
	}
	runs, ws := t.TempDir(), t.TempDir()
	w := &closeWatcher{seen: make(chan bool, 1), dir: func() string { return filepath.Join(runs, "r1") }}
	rt := &runtime.Runtime{Registry: reg, RunsDir: runs, Observer: w,
		Prepare: func(_ context.Context, dir string, _ *blueprint.Blueprint, _ bool) (*runtime.Environment, error) {
			return &runtime.Environment{Workspace: ws, Patch: func() ([]byte, error) { return []byte(storyPatch), nil }}, nil
		}}
	sum, err := rt.Run(context.Background(), bp, runtime.RunOptions{RunID: "r1", Inputs: map[string]any{"task": "make Add add"}, Workspace: ws})
	if err != nil || sum.Status != runtime.StatusHandedOff {
		t.Fatalf("%v %v", sum, err)
	}
	if !<-w.seen {
		t.Fatal("the pid file was gone before handoff.json was written")
	}
}
