package runtimetest

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"reflect"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/sandgate/sandgate/blueprint"
	"github.com/sandgate/sandgate/runtime"
)

var discardLogger = slog.New(slog.DiscardHandler)

func checkSpec(t testing.TB, s blueprint.NodeType) {
	if s.Name == "" {
		t.Error("NodeType.Name is empty")
	}
	if s.Terminal {
		t.Error("node types must not be terminal: succeed, fail and handoff are built into the format")
	}
	if s.Doc == "" {
		t.Error("NodeType.Doc is empty: users read it in the schema")
	}
	if _, ok := s.Outputs["outcome"]; ok {
		t.Error(`"outcome" is set by the runtime; do not declare it as an output`)
	}
	for name, f := range s.Fields {
		if f.Kind == "" {
			t.Errorf("field %s has no kind", name)
		}
	}
	for name, k := range s.Outputs {
		if !knownKind(k) {
			t.Errorf("output %s has kind %q, not one of the blueprint kinds", name, k)
		}
	}
}

func knownKind(k blueprint.Kind) bool {
	switch k {
	case blueprint.KindString, blueprint.KindInt, blueprint.KindFloat, blueprint.KindBool, blueprint.KindDuration,
		blueprint.KindStringList, blueprint.KindStringMap, blueprint.KindAny:
		return true
	}
	return false
}

// attempt runs one attempt and checks what it returned.
func (s *suite) attempt(t testing.TB, n runtime.Node, a int) {
	t.Helper()
	res, err := safeRun(context.Background(), n, s.input(a))
	s.judge(t, fmt.Sprintf("attempt %d", a), res, err)
}

// judge applies the error, outcome and output rules to one result.
func (s *suite) judge(t testing.TB, what string, res *runtime.Result, err error) {
	t.Helper()
	switch {
	case err != nil && s.c.AllowError != "":
		t.Logf("%s: Run returned an error, allowed by the case (%s): %v", what, s.c.AllowError, err)
		return
	case err != nil:
		t.Errorf("%s: Run returned an error: %v\n(an error means the node broke; a gate that finds a problem returns OutcomeFail — set Case.AllowError if this configuration cannot work)", what, err)
		return
	case res == nil:
		t.Errorf("%s: Run returned a nil result and a nil error", what)
		return
	}
	t.Logf("%s: %s %s", what, res.Outcome, res.Reason)
	if !validOutcome(res.Outcome) {
		t.Errorf("%s: outcome %q is not pass, fail or handoff (the runtime treats it as a broken node)", what, res.Outcome)
	}
	for _, p := range outputProblems(s.c.Type.Spec.Outputs, res.Outputs, s.c.AllowMissing == "") {
		t.Errorf("%s (outcome %s): %s", what, res.Outcome, p)
	}
}

func validOutcome(o runtime.Outcome) bool {
	return o == runtime.OutcomePass || o == runtime.OutcomeFail || o == runtime.OutcomeHandoff
}

// outputProblems compares published outputs with the declared ones.
func outputProblems(declared map[string]blueprint.Kind, got map[string]any, complete bool) []string {
	var out []string
	for name, kind := range declared {
		v, ok := got[name]
		switch {
		case !ok && complete:
			out = append(out, fmt.Sprintf("declared output %q (%s) is missing (set Case.AllowMissing if this configuration may leave it out)", name, kind))
		case ok && !fits(kind, v):
			out = append(out, fmt.Sprintf("output %q = %#v (%T) does not fit its declared kind %s", name, v, v, kind))
		case ok:
			if _, err := json.Marshal(v); err != nil {
				out = append(out, fmt.Sprintf("output %q does not encode as JSON, so the journal cannot keep it: %v", name, err))
			}
		}
	}
	for name := range got {
		if _, ok := declared[name]; !ok {
			out = append(out, fmt.Sprintf("output %q is not declared in NodeType.Outputs", name))
		}
	}
	sort.Strings(out)
	return out
}

var durationType = reflect.TypeOf(time.Duration(0))

// fits reports whether v holds the Go type kind k becomes in expressions
// (see the package documentation).
func fits(k blueprint.Kind, v any) bool {
	if k == blueprint.KindAny {
		return true
	}
	rv := reflect.ValueOf(v)
	if !rv.IsValid() {
		return false
	}
	switch k {
	case blueprint.KindString:
		return rv.Kind() == reflect.String
	case blueprint.KindInt:
		return rv.CanInt() || rv.CanUint()
	case blueprint.KindFloat:
		return rv.CanFloat() || rv.CanInt() || rv.CanUint()
	case blueprint.KindBool:
		return rv.Kind() == reflect.Bool
	case blueprint.KindDuration:
		return rv.Type() == durationType
	case blueprint.KindStringList:
		return rv.Kind() == reflect.Slice && stringElems(rv)
	case blueprint.KindStringMap:
		return rv.Kind() == reflect.Map && rv.Type().Key().Kind() == reflect.String && rv.Type().Elem().Kind() == reflect.String
	}
	return false
}

// stringElems reports whether every element of a slice is a string, so
// []any holding strings passes as well as []string.
func stringElems(rv reflect.Value) bool {
	if rv.Type().Elem().Kind() == reflect.String {
		return true
	}
	for i := 0; i < rv.Len(); i++ {
		e := rv.Index(i)
		if e.Kind() == reflect.Interface {
			e = e.Elem()
		}
		if !e.IsValid() || e.Kind() != reflect.String {
			return false
		}
	}
	return true
}

// safeRun turns a panic into an error, as the runtime does, so a node that
// panics fails the suite instead of crashing the test binary.
func safeRun(ctx context.Context, n runtime.Node, in *runtime.Input) (res *runtime.Result, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("node panicked: %v", r)
		}
	}()
	return n.Run(ctx, in)
}

func (s *suite) checkResult(t testing.TB) {
	s.attempt(t, s.build(t), 1)
}

// checkConcurrent runs Parallel attempts of one instance at once; the race
// detector reports unsynchronized state between them.
func (s *suite) checkConcurrent(t testing.TB) {
	n := s.build(t)
	type outcome struct {
		res *runtime.Result
		err error
	}
	got := make([]outcome, s.c.Parallel)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			got[i].res, got[i].err = safeRun(context.Background(), n, s.input(100+i))
		}()
	}
	close(start)
	wg.Wait()
	for i, o := range got {
		s.judge(t, fmt.Sprintf("concurrent attempt %d of %d", i+1, len(got)), o.res, o.err)
	}
}

// cancelDelay is how long the in-flight cancellation check lets Run work
// before canceling it. A node done by then has nothing left to cancel.
const cancelDelay = 50 * time.Millisecond

func (s *suite) checkCancel(t testing.TB) {
	n := s.build(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	s.cancelWithin(t, n, ctx, 200, "canceled before Run started")
	ctx, cancel = context.WithCancel(context.Background())
	timer := time.AfterFunc(cancelDelay, cancel)
	defer timer.Stop()
	s.cancelWithin(t, n, ctx, 201, "canceled while Run ran")
}

// cancelWithin waits for an attempt under ctx, failing if it outlives the
// cancellation of ctx by more than CancelWithin.
func (s *suite) cancelWithin(t testing.TB, n runtime.Node, ctx context.Context, attempt int, what string) {
	t.Helper()
	done := make(chan struct{})
	var res *runtime.Result
	var err error
	go func() {
		defer close(done)
		res, err = safeRun(ctx, n, s.input(attempt))
	}()
	select {
	case <-done:
	case <-ctx.Done():
		timer := time.NewTimer(s.c.CancelWithin)
		defer timer.Stop()
		select {
		case <-done:
		case <-timer.C:
			t.Errorf("%s: Run had not returned %s after its context was canceled; a node must watch ctx (pass it to commands and requests, select on ctx.Done())", what, s.c.CancelWithin)
			return
		}
	}
	if err == nil && (res == nil || !validOutcome(res.Outcome)) {
		t.Errorf("%s: Run returned neither an error nor a result with a valid outcome: %+v", what, res)
	}
}

// checkInRun runs the blueprint through a real runtime.
func (s *suite) checkInRun(t testing.TB) {
	reg := runtime.NewRegistry()
	if err := reg.Register(s.c.Type); err != nil {
		t.Fatalf("register: %v", err)
	}
	// A blueprint runs only on the registry it was loaded through.
	bp, err := reg.Parse(s.bp.File, s.bp.Source)
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	rt := &runtime.Runtime{Registry: reg, RunsDir: t.TempDir(), Services: s.c.Services, Prepare: s.c.Prepare, Logger: discardLogger}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	sum, err := rt.Run(ctx, bp, runtime.RunOptions{Workspace: s.c.Workspace})
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	if sum.Status == runtime.StatusRunning || sum.Status == runtime.StatusCanceled {
		t.Fatalf("run ended %s: %s", sum.Status, sum.Reason)
	}
	for _, a := range sum.Attempts {
		if a.Node == "node" && a.Error != "" && s.c.AllowError == "" {
			t.Errorf("in a run, attempt %d broke: %s", a.Attempt, a.Error)
		}
	}
}
