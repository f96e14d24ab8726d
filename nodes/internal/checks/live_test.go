package checks_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sandgate/sandgate/internal/wait"
	"github.com/sandgate/sandgate/nodes/internal/nodetest"
	sgruntime "github.com/sandgate/sandgate/runtime"
)

// TestGatesStreamOutput: a running lint or test gate's judge-box output
// reaches the attempt's output.log while the command runs (what the
// inbox's run page shows), with the harness's secrets redacted however
// the output is cut, and a canceled gate keeps it.
func TestGatesStreamOutput(t *testing.T) {
	const secret = "live-s3cr3t-6f1d0c9a"
	t.Setenv("SANDGATE_LIVE_SECRET", secret)
	line := nodetest.Quote(`printf 'started %s\n' ` + secret + `; sleep 300`)
	cases := []struct{ name, node string }{
		{"lint", "{type: lint, run: [" + line + "], on_pass: ok, on_fail: no}"},
		{"test", "{type: test, run: " + line + ", on_pass: ok, on_fail: no}"},
	}
	repo := nodetest.SeedRepo(t)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := nodetest.NewHarness(t, repo)
			h.RT.Secrets = []string{"SANDGATE_LIVE_SECRET"}
			bp, err := h.RT.Registry.Parse("live.yaml", []byte("version: 1\nname: live\nstart: gate\nnodes:\n  gate: "+c.node+"\n  ok: {type: succeed}\n  no: {type: fail, reason: gate failed}\n"))
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			done := make(chan *sgruntime.Summary, 1)
			go func() {
				sum, err := h.RT.Run(ctx, bp, sgruntime.RunOptions{RunID: "live", Workspace: repo})
				if err != nil {
					t.Errorf("run: %v", err)
				}
				done <- sum
			}()
			log := filepath.Join(h.RT.RunsDir, "live", "nodes", "gate", "1", "output.log")
			read := func() string { b, _ := os.ReadFile(log); return string(b) }
			wait.Until(t, "the running gate's output in output.log", func() bool { return strings.Contains(read(), "started ") })
			select {
			case sum := <-done:
				t.Fatalf("the gate ended (%v) before the test canceled it", sum.Status)
			default:
			}
			cancel()
			if sum := <-done; sum == nil || sum.Status != sgruntime.StatusCanceled {
				t.Fatalf("run after cancel: %+v", sum)
			}
			out := read()
			if !strings.Contains(out, "started ") || strings.Contains(out, secret) {
				t.Fatalf("output.log after cancel: %q (want the output kept, the secret redacted)", out)
			}
		})
	}
}

// TestGateRecordsCandidateDiff: a gate leaves the diff of the candidate it
// judged in its attempt directory (the inbox's change by attempt), the
// files .gitignore keeps out of the commit left out as the judge box
// leaves them out.
func TestGateRecordsCandidateDiff(t *testing.T) {
	repo := nodetest.SeedRepo(t)
	prep := `sed -i 's/a - b/a + b/' calc.go && printf 'scratch\n' > notes.log && printf '*.log\n' > .gitignore`
	sum, a := nodetest.GateRun(t, repo, prep, "type: lint\nrun: ['true']")
	if sum.Status != sgruntime.StatusSucceeded {
		t.Fatalf("run %s: %s", sum.Status, a.Feedback)
	}
	diff := string(nodetest.GateAttemptFile(t, sum, "candidate.diff"))
	if !strings.Contains(diff, "+func Add(a, b int) int { return a + b }") || !strings.Contains(diff, "+*.log") || strings.Contains(diff, "scratch") {
		t.Fatalf("candidate.diff:\n%s", diff)
	}
}
