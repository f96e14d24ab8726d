package eval

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/sandgate/sandgate/blueprint"
	"github.com/sandgate/sandgate/nodes"
	"github.com/sandgate/sandgate/runtime"
	"github.com/sandgate/sandgate/sandbox"
)

// RunRequest is one task's run, as the engine hands it to a RunFunc.
type RunRequest struct {
	Task *Task
	// File and Source are the blueprint to run: the task's own copy, with
	// the task's gate_hidden tests set on its test gates.
	File   string
	Source []byte
	// Repo is the repository and Rev the resolved base commit.
	Repo, Rev string
	Inputs    map[string]any
	// Model is the task's model, else Options.Model (may be empty: the
	// blueprint's own).
	Model string
	// RunsDir receives the run's directory; ReviewDir its local reviews.
	RunsDir, ReviewDir string
}

// RunFunc performs one run and returns its summary. A summary with an
// error still counts (the run ended, badly); no summary is a harness error.
type RunFunc func(ctx context.Context, req RunRequest) (*runtime.Summary, error)

// Options configure an evaluation.
type Options struct {
	// Blueprint is the blueprint file; Source its content (read from the
	// file when nil).
	Blueprint string
	Source    []byte
	// Out receives report.json, report.md and per task runs/<id>/.
	Out         string
	Concurrency int
	// Model is every task's model unless the task names its own.
	Model string
	// Run performs a run (default DefaultRun).
	Run RunFunc
	// AllowUnsandboxed lets grading run where the blueprint's sandbox
	// says isolation: none.
	AllowUnsandboxed bool
	// GradeTimeout bounds each grading go test (default 10m).
	GradeTimeout time.Duration
	// Progress, when set, is called whenever a task starts or ends.
	Progress func(Progress)
}

// Progress is the evaluation's state when a task starts or ends.
type Progress struct {
	Done, Total int
	Running     []string
	// Last is the task that just ended (nil when one started).
	Last    *TaskResult
	Elapsed time.Duration
}

// Run evaluates the blueprint on every task of set and writes the
// reports. When ctx is canceled it cancels every run, waits for them, and
// still writes a report, marked partial.
func Run(ctx context.Context, set *TaskSet, o Options) (*Report, error) {
	return run(ctx, set, o, &baseGrades{})
}

// run is Run keeping its base gradings in bases. Evaluations may share
// one only when their graders are alike (the same blueprint sandbox,
// AllowUnsandboxed and GradeTimeout): the package's tests share one
// across their evaluations of the calc task, graded the same each time.
func run(ctx context.Context, set *TaskSet, o Options, bases *baseGrades) (*Report, error) {
	e, err := newEngine(set, o)
	if err != nil {
		return nil, err
	}
	e.bases = bases
	rep := e.runAll(ctx)
	if err := rep.Write(o.Out); err != nil {
		return rep, err
	}
	return rep, nil
}

type engine struct {
	o         Options
	set       *TaskSet
	bp        *blueprint.Blueprint
	grader    *grader
	hasRemote bool
	bases     *baseGrades
}

func newEngine(set *TaskSet, o Options) (*engine, error) {
	if o.Source == nil {
		b, err := os.ReadFile(o.Blueprint)
		if err != nil {
			return nil, err
		}
		o.Source = b
	}
	if o.Run == nil {
		o.Run = DefaultRun(DefaultRunOptions{AllowUnsandboxed: o.AllowUnsandboxed})
	}
	o.Concurrency = max(1, o.Concurrency)
	if o.GradeTimeout == 0 {
		o.GradeTimeout = 10 * time.Minute
	}
	abs, err := filepath.Abs(o.Out)
	if err != nil {
		return nil, err
	}
	o.Out = abs
	if err := os.MkdirAll(o.Out, 0o755); err != nil {
		return nil, err
	}
	bp, err := nodes.NewRegistry().Parse(o.Blueprint, o.Source)
	if err != nil {
		return nil, err
	}
	if bp.Sandbox.Image != "" {
		// Grading boxes are the host's root; grading an image's run there
		// would judge it with other tools.
		return nil, fmt.Errorf("%s: eval does not grade in a sandbox.image yet", o.Blueprint)
	}
	policy := nodes.SandboxPolicy(bp.Sandbox)
	// Grading needs no network: the module cache is shown read-only.
	policy.Network, policy.AllowHosts, policy.Caches = sandbox.NetworkNone, nil, nodes.GoCaches()
	_, hasRemote := bp.Inputs["remote"]
	return &engine{o: o, set: set, bp: bp, hasRemote: hasRemote,
		grader: &grader{policy: policy, allowUnconfined: o.AllowUnsandboxed, timeout: o.GradeTimeout}}, nil
}

// runAll runs the tasks, at most Concurrency at once, in file order.
func (e *engine) runAll(ctx context.Context) *Report {
	start := time.Now()
	results := make([]*TaskResult, len(e.set.Tasks))
	var mu sync.Mutex
	running := map[string]bool{}
	done := 0
	report := func(last *TaskResult) {
		if e.o.Progress == nil {
			return
		}
		p := Progress{Done: done, Total: len(results), Last: last, Elapsed: time.Since(start)}
		for _, t := range e.set.Tasks {
			if running[t.ID] {
				p.Running = append(p.Running, t.ID)
			}
		}
		e.o.Progress(p)
	}
	sem := make(chan struct{}, e.o.Concurrency)
	var wg sync.WaitGroup
	for i, t := range e.set.Tasks {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		mu.Lock()
		running[t.ID] = true
		report(nil)
		mu.Unlock()
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			r := e.task(ctx, t)
			mu.Lock()
			defer mu.Unlock()
			results[i] = r
			delete(running, t.ID)
			done++
			report(r)
		}()
	}
	wg.Wait()
	for i, t := range e.set.Tasks {
		if results[i] == nil {
			results[i] = &TaskResult{ID: t.ID, Status: StatusNotRun, Reason: "the evaluation was canceled before this task started"}
		}
	}
	return newReport(e.o.Blueprint, e.set.File, results, ctx.Err() != nil)
}

// task evaluates one task: the base is checked, the blueprint runs, and
// a promoted change is graded.
func (e *engine) task(ctx context.Context, t *Task) *TaskResult {
	r := &TaskResult{ID: t.ID}
	fail := func(status string, err error) *TaskResult {
		r.Status, r.Reason = status, err.Error()
		if ctx.Err() != nil {
			r.Status = StatusCanceled
		}
		return r
	}
	dir := filepath.Join(e.o.Out, "work", t.ID)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fail(StatusError, err)
	}
	defer os.RemoveAll(filepath.Join(dir, "grade"))
	repo, gd, base, err := e.prepareRepo(ctx, t, dir)
	if err != nil {
		return fail(StatusError, err)
	}
	r.Base = base
	if why, err := e.checkBase(ctx, t, gd, base, r); err != nil {
		return fail(StatusError, err)
	} else if why != "" {
		r.Status, r.Reason = StatusInvalid, why
		return r
	}
	req, err := e.request(t, repo, base, dir)
	if err != nil {
		return fail(StatusError, err)
	}
	sum, err := e.o.Run(ctx, *req)
	if sum == nil {
		if err == nil {
			err = errors.New("the run returned no summary")
		}
		return fail(StatusError, fmt.Errorf("run: %w", err))
	}
	r.fromSummary(sum)
	if err != nil && r.Reason == "" {
		r.Reason = err.Error()
	}
	if !r.Promoted {
		return r
	}
	if err := e.gradeChange(ctx, t, sum.Dir, r); err != nil {
		return fail(StatusError, fmt.Errorf("grade the promoted change: %w", err))
	}
	return r
}

// checkBase grades the base: every fail_to_pass test must fail there and
// every pass_to_pass test pass, or the task measures nothing. A base
// already graded in this evaluation is not graded again (baseGrades).
func (e *engine) checkBase(ctx context.Context, t *Task, gitDir, base string, r *TaskResult) (string, error) {
	names := append(append([]string{}, t.FailToPass...), t.PassToPass...)
	key, err := baseKey(ctx, gitDir, base, t.Hidden, names)
	if err != nil {
		return "", err
	}
	out, err := e.bases.get(key, func() (*graded, error) {
		dir := filepath.Join(e.o.Out, "work", t.ID, "grade", "base")
		if err := tree(ctx, gitDir, base, t.Hidden, dir); err != nil {
			return nil, err
		}
		return e.grader.run(ctx, dir, t.Hidden, names)
	})
	if err != nil {
		return "", err
	}
	res := out.Tests
	var why []string
	if out.Forged != "" {
		why = append(why, "on the base, "+out.Forged)
	}
	for _, n := range t.FailToPass {
		r.Grade = append(r.Grade, TestGrade{Name: n, Kind: "fail_to_pass", Before: res[n]})
		if res[n] == TestPass {
			why = append(why, n+" passes on the base (fail_to_pass must fail there)")
		}
		if res[n] == TestMissing {
			why = append(why, n+" is not reported on the base (misspelled, or missing from the held-out files?)")
		}
	}
	for _, n := range t.PassToPass {
		r.Grade = append(r.Grade, TestGrade{Name: n, Kind: "pass_to_pass", Before: res[n]})
		if res[n] != TestPass {
			why = append(why, fmt.Sprintf("%s is %s on the base (pass_to_pass must pass there)", n, res[n]))
		}
	}
	return joinWhy(why), nil
}

// gradeChange grades the promoted commit in a fresh box: the held-out
// files win at their paths, and every declared test must behave as
// declared.
func (e *engine) gradeChange(ctx context.Context, t *Task, runDir string, r *TaskResult) error {
	dir := filepath.Join(e.o.Out, "work", t.ID, "grade", "change")
	if err := tree(ctx, filepath.Join(runDir, "promote.git"), r.Commit, t.Hidden, dir); err != nil {
		return err
	}
	names := make([]string, len(r.Grade))
	for i, g := range r.Grade {
		names[i] = g.Name
	}
	out, err := e.grader.run(ctx, dir, t.Hidden, names)
	if err != nil {
		return err
	}
	r.GradeCommand = out.Command
	var why []string
	if out.Forged != "" {
		why = append(why, out.Forged)
	}
	for i := range r.Grade {
		g := &r.Grade[i]
		g.After = out.Tests[g.Name]
		if g.After != TestPass && g.After != TestUntrusted {
			why = append(why, fmt.Sprintf("%s %s after the change", g.Name, g.After))
		}
	}
	r.Resolved = len(why) == 0
	r.FalsePromotion = !r.Resolved
	if r.Resolved {
		r.Status, r.Reason = StatusResolved, "the promoted change passes every declared test"
	} else {
		r.Status, r.Reason = StatusFalsePromotion, "promoted, but "+joinWhy(why)
	}
	return nil
}
