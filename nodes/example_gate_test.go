package nodes_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/sandgate/sandgate/blueprint"
	"github.com/sandgate/sandgate/nodes"
	"github.com/sandgate/sandgate/runtime"
)

// NoTodo is a third-party gate: it fails when the change adds a line with
// TODO. It only judges and reports; the harness runs it on the quiesced
// workspace, ties its verdict to the change it saw and makes promotion
// wait for it, because its type declares Gate.
type NoTodo struct{}

// NoTodoType declares the gate type.
func NoTodoType() runtime.Type {
	return runtime.Type{
		Spec: blueprint.NodeType{Name: "no_todo", Stage: "verify", Gate: true, Doc: "fails when the change adds a TODO"},
		New:  func(*blueprint.Node) (runtime.Node, error) { return NoTodo{}, nil },
	}
}

// Run implements runtime.Node.
func (NoTodo) Run(ctx context.Context, in *runtime.Input) (*runtime.Result, error) {
	w, ok := nodes.ServiceWorkspace.Get(in)
	if !ok {
		return nil, fmt.Errorf("no workspace")
	}
	diff, err := w.Diff()
	if err != nil {
		return nil, err
	}
	var found []string
	for _, line := range strings.Split(diff, "\n") {
		if strings.HasPrefix(line, "+") && !strings.HasPrefix(line, "+++") && strings.Contains(line, "TODO") {
			found = append(found, strings.TrimSpace(line[1:]))
		}
	}
	if len(found) == 0 {
		return &runtime.Result{Outcome: runtime.OutcomePass}, nil
	}
	return &runtime.Result{
		Outcome:  runtime.OutcomeFail,
		Reason:   fmt.Sprintf("the change adds %d TODO", len(found)),
		Feedback: "Resolve these before the change can leave:\n" + strings.Join(found, "\n"),
		Details:  map[string]any{"todos": found},
	}, nil
}

// A custom gate blocks promotion: the change adds a TODO, so no_todo
// fails and git_commit hands the run off naming it.
func Example_customGate() {
	repo, _ := os.MkdirTemp("", "sg-example-")
	defer os.RemoveAll(repo)
	_ = os.WriteFile(filepath.Join(repo, "calc.go"), []byte("package calc\n"), 0o644)
	for _, args := range [][]string{{"init", "-q"}, {"add", "."}, {"-c", "user.name=dev", "-c", "user.email=dev@example.com", "commit", "-q", "-m", "base"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = repo
		if out, err := cmd.CombinedOutput(); err != nil {
			fmt.Println(string(out), err)
			return
		}
	}
	runs, _ := os.MkdirTemp("", "sg-example-runs-")
	defer os.RemoveAll(runs)

	reg := nodes.NewRegistry()
	if err := reg.Register(NoTodoType()); err != nil {
		fmt.Println(err)
		return
	}
	bp, err := reg.Parse("todo.yaml", []byte(`version: 1
name: todo
start: edit
nodes:
  edit: {type: shell, run: "echo '// TODO: handle overflow' >> calc.go", next: todo}
  todo: {type: no_todo, next: commit}
  commit: {type: git_commit, message: "calc: note", next: done}
  done: {type: succeed}
`))
	if err != nil {
		fmt.Println(err)
		return
	}
	rt := &runtime.Runtime{Registry: reg, RunsDir: runs,
		Prepare: nodes.Environment(nodes.EnvOptions{Repo: repo, CacheDir: filepath.Join(runs, "cache")})}
	sum, err := rt.Run(context.Background(), bp, runtime.RunOptions{Workspace: repo})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(sum.Status)
	fmt.Println(sum.Reason)
	// Output:
	// handed_off
	// node commit asked for a person: the latest verdict does not allow promotion: gate todo failed (the change adds 1 TODO)
}
