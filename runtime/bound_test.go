package runtime_test

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sandgate/sandgate/blueprint"
	"github.com/sandgate/sandgate/runtime"
)

// floodNode returns what a hostile or broken node could: a 3 MiB hand-off
// reason and feedback, a string output of as much, a list of 100,000
// test names, and a credential right where a cut would fall.
type floodNode struct{ secret string }

func (n floodNode) Run(context.Context, *runtime.Input) (*runtime.Result, error) {
	big := strings.Repeat("x", runtime.MaxText-10) + n.secret + strings.Repeat("y", 3<<20)
	names := make([]any, 100_000)
	for i := range names {
		names[i] = strings.Repeat("TestName", 4)
	}
	return &runtime.Result{Outcome: runtime.OutcomeHandoff, Reason: big, Feedback: big,
		Outputs: map[string]any{"summary": big, "failures": names, "failed": len(names)}}, nil
}

// TestNodeTextsBounded: the journal keeps a few KiB of each text a node
// returned and no line over MaxJournalLine; the attempt directory keeps
// each whole text, redacted; the run ends as the node asked (a hand-off
// with its reason), not on a budget.
func TestNodeTextsBounded(t *testing.T) {
	secret := "canary-bound-5b1e"
	t.Setenv("RT_BOUND_TOKEN", secret)
	reg := runtime.NewRegistry()
	if err := reg.Register(runtime.Type{Spec: blueprint.NodeType{Name: "flood", Outputs: map[string]blueprint.Kind{
		"summary": blueprint.KindString, "failures": blueprint.KindStringList, "failed": blueprint.KindInt}},
		New: func(*blueprint.Node) (runtime.Node, error) { return floodNode{secret: secret}, nil }}); err != nil {
		t.Fatal(err)
	}
	bp, err := reg.Parse("flood.yaml", []byte("version: 1\nname: flood\nbudget: {tokens: 1000}\nstart: a\nnodes:\n  a: {type: flood, next: done}\n  done: {type: succeed}\n"))
	if err != nil {
		t.Fatal(err)
	}
	rt := &runtime.Runtime{Registry: reg, RunsDir: t.TempDir()}
	sum, err := rt.Run(context.Background(), bp, runtime.RunOptions{Workspace: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Status != runtime.StatusHandedOff || sum.Kind != "node" || !strings.HasPrefix(sum.Reason, "node a asked for a person: xxx") {
		t.Fatalf("%s/%s: %.100s", sum.Status, sum.Kind, sum.Reason)
	}
	f, err := os.Open(filepath.Join(sum.Dir, "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := bufio.NewReader(f)
	for {
		line, err := r.ReadBytes('\n')
		if len(line) >= runtime.MaxJournalLine {
			t.Errorf("a journal line of %d bytes", len(line))
		}
		if strings.Contains(string(line), secret) || strings.Contains(string(line), secret[:8]) {
			t.Errorf("the credential, or a piece of it, is in the journal")
		}
		if err != nil {
			break
		}
	}
	a := sum.Attempts[0]
	note := "the whole text is in " + filepath.Join("nodes", "a", "1", "reason.txt")
	if len(a.Feedback) > runtime.MaxFeedback+200 || !strings.Contains(sum.Reason, note) {
		t.Errorf("feedback %d bytes, reason %.60q…%q", len(a.Feedback), sum.Reason, sum.Reason[len(sum.Reason)-80:])
	}
	if s, _ := a.Outputs["summary"].(string); len(s) > runtime.MaxText+200 || a.Outputs["failed"] != 100000.0 {
		t.Errorf("summary output %d bytes, failed %v", len(s), a.Outputs["failed"])
	}
	for _, name := range []string{"reason.txt", "feedback.txt", "outputs.json"} {
		b, err := os.ReadFile(filepath.Join(sum.Dir, "nodes", "a", "1", name))
		if err != nil || len(b) < 3<<20 || strings.Contains(string(b), secret) || !strings.Contains(string(b), "[redacted RT_BOUND_TOKEN]") {
			t.Errorf("%s: %d bytes, %v (want the whole text, redacted)", name, len(b), err)
		}
	}
	var whole struct{ Failures []string }
	b, _ := os.ReadFile(filepath.Join(sum.Dir, "nodes", "a", "1", "outputs.json"))
	if json.Unmarshal(b, &whole) != nil || len(whole.Failures) != 100_000 {
		t.Errorf("outputs.json holds %d failures", len(whole.Failures))
	}
}

func TestCutText(t *testing.T) {
	for _, c := range []struct {
		in    string
		limit int
		want  string
	}{
		{"short", 60, "short"},
		{strings.Repeat("a", 70), 60, strings.Repeat("a", 12) + "\n… [58 more bytes; the whole text is in f.txt]"}, // 60 bytes in all
		{strings.Repeat("é", 40), 60, strings.Repeat("é", 6) + "\n… [68 more bytes; the whole text is in f.txt]"},  // never half a character
		{strings.Repeat("a", 70), 10, "\n… [70 more bytes; the whole text is in f.txt]"},
	} {
		got := runtime.CutText(c.in, c.limit, "f.txt")
		if got != c.want {
			t.Errorf("CutText(%q, %d) = %q, want %q", c.in, c.limit, got, c.want)
		}
		if again := runtime.CutText(got, c.limit, "g.txt"); len(got) <= c.limit && again != got {
			t.Errorf("cut twice: %q", again)
		}
	}
}
