package runtimetest_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	goruntime "runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sandgate/sandgate/blueprint"
	"github.com/sandgate/sandgate/runtime"
	"github.com/sandgate/sandgate/runtime/runtimetest"
)

// fake is a node type whose Run is a function, for good and broken nodes.
type fake struct {
	run func(ctx context.Context, in *runtime.Input) (*runtime.Result, error)
}

func (f *fake) Run(ctx context.Context, in *runtime.Input) (*runtime.Result, error) {
	return f.run(ctx, in)
}

func fakeType(outputs map[string]blueprint.Kind, run func(context.Context, *runtime.Input) (*runtime.Result, error)) runtime.Type {
	return runtime.Type{
		Spec: blueprint.NodeType{Name: "fake", Doc: "a node under test", Outputs: outputs,
			Fields: map[string]blueprint.Field{"word": {Kind: blueprint.KindString}}},
		New: func(*blueprint.Node) (runtime.Node, error) { return &fake{run: run}, nil },
	}
}

// allKinds declares one output of every kind.
var allKinds = map[string]blueprint.Kind{
	"s": blueprint.KindString, "i": blueprint.KindInt, "f": blueprint.KindFloat, "b": blueprint.KindBool,
	"d": blueprint.KindDuration, "l": blueprint.KindStringList, "m": blueprint.KindStringMap, "a": blueprint.KindAny,
}

func allOutputs() map[string]any {
	return map[string]any{"s": "x", "i": 3, "f": 1.5, "b": true, "d": time.Second,
		"l": []string{"a"}, "m": map[string]string{"k": "v"}, "a": map[string]any{"n": []any{1, "x"}}}
}

// good publishes every kind and honors its context.
func good(ctx context.Context, in *runtime.Input) (*runtime.Result, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return &runtime.Result{Outcome: runtime.OutcomePass, Outputs: allOutputs()}, nil
}

// recorder is a testing.TB that records failures instead of failing the
// test, so the suite's own verdict can be asserted.
type recorder struct {
	testing.TB
	mu     sync.Mutex
	failed bool
	errs   []string
}

func (r *recorder) Helper() {}
func (r *recorder) Fail()   { r.mu.Lock(); r.failed = true; r.mu.Unlock() }
func (r *recorder) Failed() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.failed
}
func (r *recorder) FailNow()                   { r.Fail(); goruntime.Goexit() }
func (r *recorder) Log(args ...any)            { r.TB.Log(args...) }
func (r *recorder) Logf(f string, args ...any) { r.TB.Logf(f, args...) }
func (r *recorder) Error(args ...any)          { r.record(fmt.Sprint(args...)) }
func (r *recorder) Errorf(f string, args ...any) {
	r.record(fmt.Sprintf(f, args...))
}
func (r *recorder) Fatal(args ...any) { r.record(fmt.Sprint(args...)); goruntime.Goexit() }
func (r *recorder) Fatalf(f string, args ...any) {
	r.record(fmt.Sprintf(f, args...))
	goruntime.Goexit()
}

func (r *recorder) record(msg string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.failed = true
	r.errs = append(r.errs, msg)
}

func (r *recorder) text() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Join(r.errs, "\n")
}

// runRecorded runs the suite against a recorder, in its own goroutine so
// a fatal failure (Goexit) ends only the suite.
func runRecorded(t *testing.T, c runtimetest.Case) *recorder {
	r := &recorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		runtimetest.Run(r, c)
	}()
	<-done
	return r
}

func TestGoodNodeConforms(t *testing.T) {
	runtimetest.Run(t, runtimetest.Case{Type: fakeType(allKinds, good), Body: "word: hello"})
}

func TestGoodNodePassesARecorder(t *testing.T) {
	if r := runRecorded(t, runtimetest.Case{Type: fakeType(allKinds, good)}); r.Failed() {
		t.Fatalf("a conforming node failed the suite:\n%s", r.text())
	}
}

func TestBrokenNodesFail(t *testing.T) {
	pass := func(out map[string]any) func(context.Context, *runtime.Input) (*runtime.Result, error) {
		return func(context.Context, *runtime.Input) (*runtime.Result, error) {
			return &runtime.Result{Outcome: runtime.OutcomePass, Outputs: out}, nil
		}
	}
	with := func(k string, v any) map[string]any {
		o := allOutputs()
		if v == nil {
			delete(o, k)
		} else {
			o[k] = v
		}
		return o
	}
	tests := []struct {
		name string
		c    runtimetest.Case
		want string
	}{
		{"always errors", runtimetest.Case{Type: fakeType(nil, func(context.Context, *runtime.Input) (*runtime.Result, error) {
			return nil, errors.New("service down")
		})}, "Run returned an error: service down"},
		{"nil result", runtimetest.Case{Type: fakeType(nil, func(context.Context, *runtime.Input) (*runtime.Result, error) { return nil, nil })},
			"nil result and a nil error"},
		{"unknown outcome", runtimetest.Case{Type: fakeType(nil, func(context.Context, *runtime.Input) (*runtime.Result, error) {
			return &runtime.Result{Outcome: "ok"}, nil
		})}, `outcome "ok" is not pass, fail or handoff`},
		{"panics", runtimetest.Case{Type: fakeType(nil, func(context.Context, *runtime.Input) (*runtime.Result, error) { panic("boom") })},
			"node panicked: boom"},
		{"undeclared output", runtimetest.Case{Type: fakeType(allKinds, pass(with("extra", 1)))}, `output "extra" is not declared`},
		{"missing output", runtimetest.Case{Type: fakeType(allKinds, pass(with("d", nil)))}, `declared output "d" (duration) is missing`},
		{"int for string", runtimetest.Case{Type: fakeType(allKinds, pass(with("s", 1)))}, `output "s" = 1 (int) does not fit its declared kind string`},
		{"string for int", runtimetest.Case{Type: fakeType(allKinds, pass(with("i", "3")))}, `declared kind int`},
		{"int for duration", runtimetest.Case{Type: fakeType(allKinds, pass(with("d", 5)))}, `declared kind duration`},
		{"ints for string list", runtimetest.Case{Type: fakeType(allKinds, pass(with("l", []int{1})))}, `declared kind string_list`},
		{"any map for string map", runtimetest.Case{Type: fakeType(allKinds, pass(with("m", map[string]any{"k": 1})))}, `declared kind string_map`},
		{"float for bool", runtimetest.Case{Type: fakeType(allKinds, pass(with("b", 1.0)))}, `declared kind bool`},
		{"string for float", runtimetest.Case{Type: fakeType(allKinds, pass(with("f", "1.5")))}, `declared kind float`},
		{"nil for string", runtimetest.Case{Type: fakeType(allKinds, pass(with("s", (*string)(nil))))}, `declared kind string`},
		{"any not JSON", runtimetest.Case{Type: fakeType(allKinds, pass(with("a", make(chan int))))}, `does not encode as JSON`},
		{"declares outcome", runtimetest.Case{Type: fakeType(map[string]blueprint.Kind{"outcome": blueprint.KindString}, good)},
			`"outcome" is set by the runtime`},
		{"body does not validate", runtimetest.Case{Type: fakeType(nil, good), Body: "wrod: x"}, "does not validate"},
		{"ignores cancellation", runtimetest.Case{Type: fakeType(nil, func(context.Context, *runtime.Input) (*runtime.Result, error) {
			time.Sleep(time.Second) // work that never looks at ctx
			return &runtime.Result{Outcome: runtime.OutcomePass}, nil
		}), CancelWithin: 100 * time.Millisecond, Parallel: 2}, "had not returned 100ms after its context was canceled"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runRecorded(t, tt.c)
			if !r.Failed() {
				t.Fatal("the suite passed a broken node")
			}
			if !strings.Contains(r.text(), tt.want) {
				t.Fatalf("the suite failed, but not for %q:\n%s", tt.want, r.text())
			}
		})
	}
}

func TestCaseAllowances(t *testing.T) {
	broken := fakeType(allKinds, func(_ context.Context, in *runtime.Input) (*runtime.Result, error) {
		if in.Attempt%2 == 0 {
			return nil, errors.New("service down")
		}
		return &runtime.Result{Outcome: runtime.OutcomeHandoff, Reason: "refused"}, nil
	})
	r := runRecorded(t, runtimetest.Case{Type: broken, AllowError: "the service is down on purpose",
		AllowMissing: "a refusal publishes nothing"})
	if r.Failed() {
		t.Fatalf("allowed errors and missing outputs failed the suite:\n%s", r.text())
	}
	// The allowances cover only what they name.
	r = runRecorded(t, runtimetest.Case{Type: broken, AllowError: "the service is down on purpose"})
	if !strings.Contains(r.text(), "is missing") {
		t.Fatalf("AllowError excused missing outputs:\n%s", r.text())
	}
}

// racy counts attempts in shared state without a lock.
type racy struct{ attempts int }

func (r *racy) Run(ctx context.Context, in *runtime.Input) (*runtime.Result, error) {
	r.attempts++
	return &runtime.Result{Outcome: runtime.OutcomePass}, nil
}

const racyChildEnv = "RUNTIMETEST_RACY_CHILD"

// TestRacyNodeChild is the child of TestRacyNodeFails: it runs the suite
// against racy with a real *testing.T, for the race detector to fail.
func TestRacyNodeChild(t *testing.T) {
	if os.Getenv(racyChildEnv) != "1" {
		return // only as the helper process of TestRacyNodeFails
	}
	runtimetest.Run(t, runtimetest.Case{Type: runtime.Type{
		Spec: blueprint.NodeType{Name: "racy", Doc: "counts attempts without a lock"},
		New:  func(*blueprint.Node) (runtime.Node, error) { return &racy{}, nil },
	}})
}

// TestRacyNodeFails checks that a node with a data race on shared state
// fails the suite. The race detector fails a test when it sees a race,
// whatever TB reports, so the suite runs in a child process of this race
// build and the child must fail with a race report on racy.Run.
func TestRacyNodeFails(t *testing.T) {
	if !raceEnabled {
		t.Skip("only the race detector sees data races: run go test -race")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestRacyNodeChild$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), racyChildEnv+"=1")
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("the suite passed a node with a data race:\n%s", out)
	}
	if !strings.Contains(string(out), "DATA RACE") || !strings.Contains(string(out), "(*racy).Run") {
		t.Fatalf("the child failed, but not on racy's data race:\n%s", out)
	}
}
