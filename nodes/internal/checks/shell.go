package checks

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

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
	live, closeLive := liveLog(in, "output.log")
	res, err := w.Command(ctx, sandbox.Command{Args: args, Timeout: in.Spec.Timeout, Live: live})
	closeLive() // a canceled command keeps what it wrote there
	if err != nil {
		return nil, err
	}
	saveOutput(in, "output.log", res)
	out := &runtime.Result{Outcome: runtime.OutcomePass,
		Outputs: map[string]any{"exit_code": res.ExitCode, "output": feedback.Tail(string(res.Output), 4096)}}
	if res.ExitCode != 0 {
		out.Outcome = runtime.OutcomeFail
		out.Feedback = fmt.Sprintf("`%s` exited with %d%s:\n%s", s.run.Display(args), res.ExitCode, feedback.TimedOut(res.TimedOut), feedback.Tail(string(res.Output), 8192)) + feedback.DiskNote(res.DiskFull, res.DiskNote)
	}
	return out, nil
}

// liveLog opens name in the attempt directory for a command's output as
// it runs (sandbox.Command.Live), credentials redacted however the output
// is cut; done closes it. saveOutput later writes the whole output over
// it; a command that is canceled or whose harness dies keeps what it wrote.
func liveLog(in *runtime.Input, name string) (w io.Writer, done func()) {
	dir, err := in.MkDir()
	if err != nil {
		return nil, func() {}
	}
	f, err := os.OpenFile(filepath.Join(dir, name), os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, func() {}
	}
	s := in.Redactor.Stream(f)
	return s, func() { _ = s.Close(); _ = f.Close() }
}

// saveOutput keeps a command's full captured output in the attempt dir.
func saveOutput(in *runtime.Input, name string, r *sandbox.Result) {
	data := r.Output
	if r.Dropped > 0 {
		data = append(append([]byte(nil), data...), fmt.Sprintf("\n[sandgate: %d more bytes dropped]\n", r.Dropped)...)
	}
	_ = in.WriteFile(name, data)
}
