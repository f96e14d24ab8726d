package nodes

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/sandgate/sandgate/blueprint"
	"github.com/sandgate/sandgate/runtime"
	"github.com/sandgate/sandgate/sandbox"
)

// Shell runs a command line in the sandbox and passes on exit code 0.
type Shell struct {
	run string
}

var _ runtime.Node = (*Shell)(nil)

func newShell(spec *blueprint.Node) (runtime.Node, error) {
	return &Shell{run: spec.Config["run"].(string)}, nil
}

// Run implements runtime.Node.
func (s *Shell) Run(ctx context.Context, in *runtime.Input) (*runtime.Result, error) {
	w, err := workspaceOf(in)
	if err != nil {
		return nil, err
	}
	res, err := w.Exec(ctx, s.run, in.Spec.Timeout)
	if err != nil {
		return nil, err
	}
	saveOutput(in, "output.log", res)
	out := &runtime.Result{Outcome: runtime.OutcomePass,
		Outputs: map[string]any{"exit_code": res.ExitCode, "output": tail(string(res.Output), 4096)}}
	if res.ExitCode != 0 {
		out.Outcome = runtime.OutcomeFail
		out.Feedback = fmt.Sprintf("`%s` exited with %d%s:\n%s", s.run, res.ExitCode, timedOut(res), tail(string(res.Output), 8192)) + diskNote(res)
	}
	return out, nil
}

func timedOut(r *sandbox.Result) string {
	if r.TimedOut {
		return " (timed out)"
	}
	return ""
}

// diskNote tells the agent when a command failed because the box's disk
// limit was reached, which its output alone (ENOSPC) does not explain.
func diskNote(r *sandbox.Result) string {
	if !r.DiskFull {
		return ""
	}
	return "\nNote: " + r.DiskNote + "."
}

// tail keeps the last n bytes of s, on a line boundary when possible.
func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[len(s)-n:]
	if i := strings.IndexByte(s, '\n'); i >= 0 && i < len(s)-1 {
		s = s[i+1:]
	}
	return "…\n" + s
}

// saveOutput keeps a command's full captured output in the attempt dir.
func saveOutput(in *runtime.Input, name string, r *sandbox.Result) {
	dir, err := in.MkDir()
	if err != nil {
		return
	}
	data := r.Output
	if r.Dropped > 0 {
		data = append(append([]byte(nil), data...), fmt.Sprintf("\n[sandgate: %d more bytes dropped]\n", r.Dropped)...)
	}
	_ = os.WriteFile(filepath.Join(dir, name), data, 0o644)
}

// gate finishes a gate node: it records the result in the run's verdict,
// writes the attempt's verify.json and sets the outcome.
// fp is the change's fingerprint taken before the gate ran: the verdict
// vouches for what the gate saw.
func gate(in *runtime.Input, w *Workspace, name, fp string, start time.Time, r GateResult, res *runtime.Result) (*runtime.Result, error) {
	r.Node, r.DurationMS, r.Fingerprint = in.NodeID, time.Since(start).Milliseconds(), fp
	one, err := w.record(name, r)
	if err != nil {
		return nil, err
	}
	if dir, err := in.MkDir(); err == nil {
		_ = os.WriteFile(filepath.Join(dir, "verify.json"), one, 0o644)
		res.Artifacts = append(res.Artifacts, "verify.json")
	}
	res.Outcome = runtime.OutcomeFail
	if r.Pass {
		res.Outcome = runtime.OutcomePass
	}
	return res, nil
}

// currentFingerprint fingerprints the change as it is now.
func (w *Workspace) currentFingerprint() (string, error) {
	changes, err := w.Changes()
	if err != nil {
		return "", err
	}
	return fingerprint(changes), nil
}

// beginGate is how every gate starts: find the workspace and fingerprint
// the change before judging it.
func beginGate(in *runtime.Input) (*Workspace, string, time.Time, error) {
	w, err := workspaceOf(in)
	if err != nil {
		return nil, "", time.Time{}, err
	}
	fp, err := w.currentFingerprint()
	return w, fp, time.Now(), err
}
