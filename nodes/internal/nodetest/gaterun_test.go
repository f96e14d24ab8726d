package nodetest

import (
	"context"
	"errors"
	"fmt"
	goruntime "runtime"
	"strings"
	"sync"
	"testing"

	"github.com/sandgate/sandgate/blueprint"
	"github.com/sandgate/sandgate/runtime"
)

// fakeT is a testing.TB whose Fatal ends only the helper under test (in
// its own goroutine) and keeps the message, so a test can assert that a
// helper fails.
type fakeT struct {
	testing.TB
	mu  sync.Mutex
	msg string
}

func (f *fakeT) Helper() {}
func (f *fakeT) Fatalf(format string, args ...any) {
	f.mu.Lock()
	f.msg = fmt.Sprintf(format, args...)
	f.mu.Unlock()
	goruntime.Goexit()
}
func (f *fakeT) Fatal(args ...any) { f.Fatalf("%s", fmt.Sprint(args...)) }

// fatal runs check against a fakeT and returns what it failed with, ""
// when it did not.
func fatal(t *testing.T, check func(testing.TB)) string {
	f := &fakeT{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		check(f)
	}()
	<-done
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.msg
}

// brokenGate is a gate type whose Run does what do says: "panic",
// "error", or "hang" until its context ends.
func brokenGate(name, do string) runtime.Type {
	return runtime.Type{Spec: blueprint.NodeType{Name: name, Gate: true},
		New: func(*blueprint.Node) (runtime.Node, error) { return brokenNode(do), nil }}
}

type brokenNode string

func (b brokenNode) Run(ctx context.Context, _ *runtime.Input) (*runtime.Result, error) {
	switch b {
	case "panic":
		panic("index out of range [3] with length 3")
	case "hang":
		<-ctx.Done()
		return nil, ctx.Err()
	}
	return nil, errors.New("the judge box: start it: fork/exec: no such file or directory")
}

// TestAttackHelpersRefuseACrash: a gate that panics, breaks or is stopped
// by its timeout promotes nothing and its run fails, which the helpers
// took for a caught attack; they must refuse it. Before, every one of
// these AssertNothingPromoted calls passed, and so did MustFail on the
// timed-out gate (its outcome is fail, its verify.json a failure).
func TestAttackHelpersRefuseACrash(t *testing.T) {
	repo := SeedRepo(t)
	cases := []struct{ do, gate, want string }{
		{"panic", "{type: broken}", "node gate (attempt 1) broke: node panicked: index out of range"},
		{"error", "{type: broken}", "node gate (attempt 1) broke: the judge box: start it"},
		{"hang", "{type: broken, timeout: 1s}", "node gate (attempt 1) was stopped by its timeout"},
	}
	for _, c := range cases {
		t.Run(c.do, func(t *testing.T) {
			h := NewHarness(t, repo)
			if err := h.RT.Registry.Register(brokenGate("broken", c.do)); err != nil {
				t.Fatal(err)
			}
			src := "version: 1\nname: g\nstart: prep\nnodes:\n  prep: {type: shell, run: \"sed -i 's/a - b/a + b/' calc.go\", next: gate}\n" +
				"  gate: " + strings.Replace(c.gate, "}", ", on_pass: commit, on_fail: no}", 1) + "\n" +
				"  commit: {type: git_commit, next: ok}\n  ok: {type: succeed}\n  no: {type: fail, reason: gate failed}\n"
			sum := h.Run(t, src, nil)
			if sum.Status == runtime.StatusSucceeded {
				t.Fatalf("the broken gate's run succeeded: %s", sum.Reason)
			}
			if msg := fatal(t, func(t testing.TB) { AssertNothingPromoted(t, sum) }); !strings.Contains(msg, c.want) {
				t.Errorf("AssertNothingPromoted: want a failure naming %q, got %q", c.want, msg)
			}
			a := LastAttempt(sum, "gate")
			if msg := fatal(t, func(t testing.TB) { MustFail(t, sum, a) }); !strings.Contains(msg, c.want) {
				t.Errorf("MustFail: want a failure naming %q, got %q", c.want, msg)
			}
		})
	}
}

// TestGateRunRefusesAFailedSetup: a prep step that fails never reaches
// the gate; GateRun fails the test with the step's output. Before, the
// gate ran anyway (here a lint that passes, so the run even succeeded).
func TestGateRunRefusesAFailedSetup(t *testing.T) {
	repo := SeedRepo(t)
	msg := fatal(t, func(t testing.TB) {
		GateRun(t, repo, "echo planting; no-such-tool --plant", "type: lint\nrun: ['true']")
	})
	for _, w := range []string{setupFailed, "no-such-tool", "exited with 127"} {
		if !strings.Contains(msg, w) {
			t.Errorf("GateRun's failure lacks %q:\n%s", w, msg)
		}
	}
	// A working setup and a gate's verdict pass every helper.
	sum, a := GateRun(t, repo, "echo '// TODO' >> calc.go", "type: lint\nrun: ['! grep -q TODO calc.go']")
	MustFail(t, sum, a)
	AssertNothingPromoted(t, sum)
}
