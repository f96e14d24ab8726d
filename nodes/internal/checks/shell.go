package checks

import (
	"context"
	"fmt"

	"github.com/sandgate/sandgate/blueprint"
	"github.com/sandgate/sandgate/nodes/internal/command"
	"github.com/sandgate/sandgate/nodes/internal/feedback"
	"github.com/sandgate/sandgate/nodes/workspace"
	"github.com/sandgate/sandgate/runtime"
	"github.com/sandgate/sandgate/sandbox"
)

// Shell runs a command line in the sandbox and passes on exit code 0.
type Shell struct {
	run command.Command
}

var _ runtime.Node = (*Shell)(nil)

func newShell(spec *blueprint.Node) (runtime.Node, error) {
	c, err := blueprint.Decode[ShellConfig](spec)
	if err != nil {
		return nil, err
	}
	return &Shell{run: command.Of(c.Run)}, nil
}

// Run implements runtime.Node.
func (s *Shell) Run(ctx context.Context, in *runtime.Input) (*runtime.Result, error) {
	w, err := workspace.Of(in)
	if err != nil {
		return nil, err
	}
	args, err := s.run.Args(in)
	if err != nil {
		return nil, err
	}
	live, closeLive := command.Live(in)
	res, err := w.Command(ctx, sandbox.Command{Args: args, Timeout: in.Spec.Timeout, Live: live})
	closeLive() // a canceled command keeps what it wrote there
	if err != nil {
		return nil, err
	}
	saveOutput(in, command.LiveOutput, res)
	out := &runtime.Result{Outcome: runtime.OutcomePass,
		Outputs: map[string]any{"exit_code": res.ExitCode, "output": feedback.Tail(string(res.Output), 4096)}}
	if res.ExitCode != 0 {
		out.Outcome = runtime.OutcomeFail
		out.Feedback = fmt.Sprintf("`%s` exited with %d%s:\n%s", s.run.Display(args), res.ExitCode, feedback.TimedOut(res.TimedOut), feedback.Tail(string(res.Output), 8192)) + feedback.DiskNote(res.DiskFull, res.DiskNote)
	}
	return out, nil
}

// saveOutput keeps a command's full captured output in the attempt dir.
func saveOutput(in *runtime.Input, name string, r *sandbox.Result) {
	data := r.Output
	if r.Dropped > 0 {
		data = append(append([]byte(nil), data...), fmt.Sprintf("\n[sandgate: %d more bytes dropped]\n", r.Dropped)...)
	}
	_ = in.WriteFile(name, data)
}
