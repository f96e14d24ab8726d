package runtime_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/sandgate/sandgate/blueprint"
	"github.com/sandgate/sandgate/runtime"
)

// spender spends in two steps, Adding each expense to the run's live
// count, and holds the money it spent until the test releases it.
type spender struct {
	spent   chan struct{}
	release chan struct{}
}

func (s *spender) Run(ctx context.Context, in *runtime.Input) (*runtime.Result, error) {
	in.Spend.Add(0.25)
	in.Spend.Add(0.35)
	close(s.spent)
	<-s.release
	return &runtime.Result{Outcome: runtime.OutcomePass, Cost: 0.60}, nil
}

// looker records the run's total while its sibling is still running, and
// reports a cost of its own without Adding it.
type looker struct {
	wait   <-chan struct{}
	looked chan struct{}
	seen   float64
}

func (l *looker) Run(ctx context.Context, in *runtime.Input) (*runtime.Result, error) {
	<-l.wait
	l.seen = in.Spend.Total()
	close(l.looked)
	return &runtime.Result{Outcome: runtime.OutcomePass, Cost: 0.10}, nil
}

// TestSpendSeenByParallelSiblings: a node running beside another sees
// that sibling's spending as it happens, not only once it has finished,
// so parallel agents cannot each spend the whole budget; a node that
// reports a cost without Adding it is counted when it finishes.
func TestSpendSeenByParallelSiblings(t *testing.T) {
	sp := &spender{spent: make(chan struct{}), release: make(chan struct{})}
	lk := &looker{wait: sp.spent, looked: make(chan struct{})}
	var after float64
	var once sync.Once
	last := nodeFunc(func(in *runtime.Input) {
		once.Do(func() { after = in.Spend.Total() })
	})
	reg, bp := spendBlueprint(t, sp, lk, last)
	go func() {
		// Release the spender once its sibling has looked.
		<-lk.looked
		close(sp.release)
	}()
	rt := &runtime.Runtime{Registry: reg, RunsDir: t.TempDir(), CancelPoll: 10 * time.Millisecond}
	sum, err := rt.Run(context.Background(), bp, runtime.RunOptions{Workspace: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Status != runtime.StatusSucceeded {
		t.Fatalf("%s: %s", sum.Status, sum.Reason)
	}
	if lk.seen < 0.60-1e-9 {
		t.Errorf("a running sibling's $0.60 was invisible: the looker saw $%.2f", lk.seen)
	}
	if after < 0.70-1e-9 || after > 0.70+1e-9 {
		t.Errorf("after the parallel section the run's live total is $%.2f, want $0.70 (0.60 added live, counted once, + 0.10 reported without Add)", after)
	}
}

// TestRemoteSpendSeenByParallelAttempts: the same through a Remote, as an
// engine (Temporal) runs parallel attempts of one run on its host, each
// in its own activity: the looker sees the spender's money while both
// run, and the attempts get the run's budget.
func TestRemoteSpendSeenByParallelAttempts(t *testing.T) {
	sp := &spender{spent: make(chan struct{}), release: make(chan struct{})}
	lk := &looker{wait: sp.spent, looked: make(chan struct{})}
	reg, bp := spendBlueprint(t, sp, lk, nodeFunc(func(*runtime.Input) {}))
	rt := &runtime.Runtime{Registry: reg, RunsDir: t.TempDir()}
	ctx := context.Background()
	r, _, err := rt.OpenRemote(ctx, bp, "r-spend", runtime.RemoteOptions{Workspace: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Abort()
	e := &engine{t: t, sched: runtime.NewScheduler(bp), remote: r}
	fork := e.input(runtime.Event{Type: runtime.EvRunStarted, RunID: "r-spend"})
	if _, err := r.Record(e.sent); err != nil {
		t.Fatal(err)
	}
	fin, err := r.Attempt(ctx, fork[0].Node, fork[0].Attempt, "")
	if err != nil {
		t.Fatal(err)
	}
	pair := e.input(fin)
	if _, err := r.Record(e.sent); err != nil || len(pair) != 2 {
		t.Fatalf("%d attempts to start, %v", len(pair), err)
	}
	var wg sync.WaitGroup
	for _, s := range pair {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _ = r.Attempt(ctx, s.Node, s.Attempt, "")
		}()
	}
	<-lk.looked
	close(sp.release)
	wg.Wait()
	if lk.seen < 0.60-1e-9 {
		t.Errorf("a running sibling's $0.60 was invisible to a remote attempt: the looker saw $%.2f", lk.seen)
	}
}

// spendBlueprint registers the spender, the looker, a starter and last,
// and parses fork → [spend, look] → join.
func spendBlueprint(t *testing.T, sp, lk, last runtime.Node) (*runtime.Registry, *blueprint.Blueprint) {
	t.Helper()
	reg := runtime.NewRegistry()
	for name, n := range map[string]runtime.Node{"spend": sp, "look": lk, "start": nodeFunc(func(*runtime.Input) {}), "last": last} {
		if err := reg.Register(runtime.Type{Spec: blueprint.NodeType{Name: name},
			New: func(*blueprint.Node) (runtime.Node, error) { return n, nil }}); err != nil {
			t.Fatal(err)
		}
	}
	src := `version: 1
name: spend
start: fork
nodes:
  fork: {type: start, next: [a, b]}
  a: {type: spend, next: join}
  b: {type: look, next: join}
  join: {type: last, needs: [a, b], next: done}
  done: {type: succeed}
`
	bp, err := blueprint.Parse("spend.yaml", []byte(src), blueprint.WithTypes(reg))
	if err != nil {
		t.Fatal(err)
	}
	return reg, bp
}

// nodeFunc is a node that passes after calling f.
type nodeFunc func(in *runtime.Input)

func (f nodeFunc) Run(_ context.Context, in *runtime.Input) (*runtime.Result, error) {
	f(in)
	return &runtime.Result{Outcome: runtime.OutcomePass}, nil
}

// canceledSpender spends, then runs until it is canceled: it ends without
// a result, so no node_finished journals its cost.
type canceledSpender struct{ spent chan struct{} }

func (s *canceledSpender) Run(ctx context.Context, in *runtime.Input) (*runtime.Result, error) {
	in.Spend.Add(0.60)
	close(s.spent)
	<-ctx.Done()
	return nil, ctx.Err()
}

// asker hands the run off once its sibling has spent.
type asker struct{ wait <-chan struct{} }

func (a *asker) Run(context.Context, *runtime.Input) (*runtime.Result, error) {
	<-a.wait
	return &runtime.Result{Outcome: runtime.OutcomeHandoff, Reason: "a person decides"}, nil
}

// TestCanceledAttemptCostCounted: a sibling hands the run off while an
// attempt that has spent is still running; the attempt is canceled, and
// the run record still counts what it spent (on run_closed).
func TestCanceledAttemptCostCounted(t *testing.T) {
	sp := &canceledSpender{spent: make(chan struct{})}
	reg, bp := spendBlueprint(t, sp, &asker{wait: sp.spent}, nodeFunc(func(*runtime.Input) {}))
	rt := &runtime.Runtime{Registry: reg, RunsDir: t.TempDir(), CancelPoll: 10 * time.Millisecond}
	sum, err := rt.Run(context.Background(), bp, runtime.RunOptions{Workspace: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Status != runtime.StatusHandedOff || sum.Cost < 0.60-1e-9 || sum.Cost > 0.60+1e-9 {
		t.Fatalf("%s (%s), cost $%.2f: want handed off with the canceled attempt's $0.60 counted", sum.Status, sum.Reason, sum.Cost)
	}
}
