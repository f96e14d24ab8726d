package runtime_test

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/sandgate/sandgate/blueprint"
	"github.com/sandgate/sandgate/runtime"
)

// noteRecorder is an observer that also takes progress notes.
type noteRecorder struct {
	mu    sync.Mutex
	notes []runtime.Note
}

func (r *noteRecorder) Event(runtime.Event) {}

func (r *noteRecorder) Note(n runtime.Note) {
	r.mu.Lock()
	r.notes = append(r.notes, n)
	r.mu.Unlock()
}

// notingNode says what it is doing, with a credential in the text.
type notingNode struct{}

func (notingNode) Run(ctx context.Context, in *runtime.Input) (*runtime.Result, error) {
	runtime.Notef(ctx, "building a clean box with %s", "canary-note-5c1e")
	return &runtime.Result{Outcome: runtime.OutcomePass}, nil
}

// TestNotes: the workspace set-up and each node attempt can say what they
// are doing; a NoteObserver hears it, tagged with the attempt and
// redacted, before the run ends; a plain Observer is never called with
// notes.
func TestNotes(t *testing.T) {
	t.Setenv("NOTE_TEST_TOKEN", "canary-note-5c1e")
	reg := runtime.NewRegistry()
	if err := reg.Register(runtime.Type{Spec: blueprint.NodeType{Name: "noting"}, New: func(*blueprint.Node) (runtime.Node, error) { return notingNode{}, nil }}); err != nil {
		t.Fatal(err)
	}
	bp, err := reg.Parse("n.yaml", []byte("version: 1\nname: n\nstart: a\nnodes:\n  a: {type: noting, next: done}\n  done: {type: succeed}\n"))
	if err != nil {
		t.Fatal(err)
	}
	rec := &noteRecorder{}
	rt := &runtime.Runtime{Registry: reg, RunsDir: t.TempDir(), Observer: rec,
		Prepare: func(ctx context.Context, dir string, bp *blueprint.Blueprint, resume bool) (*runtime.Environment, error) {
			runtime.Notef(ctx, "snapshot of %s", "HEAD")
			return &runtime.Environment{}, nil
		}}
	if _, err := rt.Run(t.Context(), bp, runtime.RunOptions{Workspace: t.TempDir(), RunID: "r1"}); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, n := range rec.notes {
		got = append(got, n.RunID+" "+n.Node+"#"+strconv.Itoa(n.Attempt)+" "+n.Text)
	}
	want := []string{"r1 #0 setting up the workspace", "r1 #0 snapshot of HEAD", "r1 #0 workspace ready in ", "r1 a#1 building a clean box with [redacted NOTE_TEST_TOKEN]"}
	if len(got) != len(want) {
		t.Fatalf("notes %q, want %q", got, want)
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("note %d = %q, want it to start %q", i, got[i], want[i])
		}
	}
	// Outside a run, or with a plain observer, Notef is a no-op.
	runtime.Notef(context.Background(), "nobody listens")
}

// TestRunInputs: the Prepare hook sees the run's inputs with the
// blueprint's defaults filled in, before the run's first event; any
// other context has none.
func TestRunInputs(t *testing.T) {
	reg := runtime.NewRegistry()
	bp, err := reg.Parse("i.yaml", []byte("version: 1\nname: i\ninputs:\n  task: {required: true}\n  packages: {default: ./...}\nstart: done\nnodes:\n  done: {type: succeed}\n"))
	if err != nil {
		t.Fatal(err)
	}
	var seen map[string]any
	rt := &runtime.Runtime{Registry: reg, RunsDir: t.TempDir(),
		Prepare: func(ctx context.Context, dir string, bp *blueprint.Blueprint, resume bool) (*runtime.Environment, error) {
			seen = runtime.RunInputs(ctx)
			return &runtime.Environment{}, nil
		}}
	if _, err := rt.Run(t.Context(), bp, runtime.RunOptions{Workspace: t.TempDir(), Inputs: map[string]any{"task": "fix it"}}); err != nil {
		t.Fatal(err)
	}
	if seen["task"] != "fix it" || seen["packages"] != "./..." || len(seen) != 2 {
		t.Fatalf("Prepare saw inputs %v, want task and the default packages", seen)
	}
	if got := runtime.RunInputs(context.Background()); got != nil {
		t.Fatalf("RunInputs outside a Prepare hook = %v", got)
	}
}
