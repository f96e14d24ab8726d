package command

import (
	"io"
	"os"
	"path/filepath"

	"github.com/sandgate/sandgate/runtime"
)

// LiveOutput is the file in an attempt's directory that a command's
// output goes to while it runs (sandbox.Command.Live); the inbox shows its
// end for a running attempt, and a canceled attempt keeps what it holds.
const LiveOutput = "output.log"

// Live opens the attempt's LiveOutput for a command's output as it runs,
// credentials redacted however the output is cut; done closes it. Each
// command of the attempt appends, so a gate's several commands (lint's
// list, the test gate's re-runs) read in order. A shell node writes its
// whole output over it afterwards; gates keep theirs under their own
// names as well.
func Live(in *runtime.Input) (w io.Writer, done func()) {
	dir, err := in.MkDir()
	if err != nil {
		return nil, func() {}
	}
	f, err := os.OpenFile(filepath.Join(dir, LiveOutput), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, func() {}
	}
	s := in.Redactor.Stream(f)
	return s, func() { _ = s.Close(); _ = f.Close() }
}
