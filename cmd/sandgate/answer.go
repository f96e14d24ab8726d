package main

import (
	"context"
	"fmt"
	"io"

	"github.com/sandgate/sandgate/runtime"
)

const answerHelp = `RUN_ID|RUN_DIR --to NODE --note TEXT [--by NAME]

Continues a handed-off run on its workspace as the run left it: NODE starts
again with TEXT as its feedback (for an agent: what the person says to do),
and the run goes on under a fresh allowance of its edge bounds and budgets.
The run keeps the model, endpoint, key variable, prices, recording and
allowances (--allow-env, --allow-endpoint, --allow-unsandboxed) it was
started with; a flag given here replaces its recorded value. An answer
refused before it starts (no API key, a model without a price) leaves the
run handed off, to be answered again.
The journal records who answered, when and what. budget.answers (default 3)
bounds how often a run may be answered. Exit codes as for run.

flags:`

func cmdAnswer(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("answer", answerHelp, stdout, stderr)
	var rf runFlags
	rf.register(fs)
	to := fs.String("to", "", "node to continue with; the note becomes its feedback (required)")
	note := fs.String("note", "", "the answer: what the person tells the node (required)")
	by := fs.String("by", "", "who answers (default $USER)")
	dirs, code, ok := fs.parseN(args, 1, 1)
	if !ok {
		return code
	}
	rf.given = fs.given()
	if *to == "" || *note == "" {
		return fs.usageError("--to NODE and --note TEXT are both required")
	}
	return continueRun(&rf, dirs[0], stdout, stderr, func(ctx context.Context, rt *runtime.Runtime, dir string) (*runtime.Summary, error) {
		// Two harnesses must not continue one run: the journal would
		// interleave.
		if alive, _ := runtime.Alive(dir); alive {
			return nil, fmt.Errorf("run %s is being carried on by another sandgate process (see its pid file): wait for it", dir)
		}
		return rt.Answer(ctx, dir, runtime.Answer{Node: *to, Note: *note, By: *by})
	})
}
