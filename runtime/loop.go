package runtime

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// CancelFile is the file whose presence in a run directory asks the run to
// stop; `sandgate cancel` creates it from another process.
const CancelFile = "cancel"

// RequestCancel asks the run in dir to stop, from any process.
func RequestCancel(dir, reason string) error {
	if _, err := os.Stat(filepath.Join(dir, "events.jsonl")); err != nil {
		return fmt.Errorf("%s is not a run directory: %w", dir, err)
	}
	// Written aside and renamed into place: the run polls for the file
	// and would otherwise read it created but still empty, losing the
	// reason (who canceled) to the default.
	tmp, err := os.CreateTemp(dir, "."+CancelFile+"-*")
	if err != nil {
		return err
	}
	_, err = tmp.WriteString(orDefault(reason, "canceled from outside") + "\n")
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), filepath.Join(dir, CancelFile))
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}

// loop waits for node results, budgets and cancel requests until the
// scheduler finishes the run.
func (x *execution) loop(ctx context.Context) (*Summary, error) {
	poll := x.rt.CancelPoll
	if poll <= 0 {
		poll = 100 * time.Millisecond
	}
	tick := time.NewTicker(poll)
	defer tick.Stop()
	var deadline <-chan time.Time
	if t := x.bp.Budget.Timeout; t > 0 {
		timer := time.NewTimer(time.Until(x.started.Add(t)))
		defer timer.Stop()
		deadline = timer.C
	}
	for x.final == nil {
		var err error
		select {
		case ev := <-x.done:
			if a := x.running[ev.Node]; a == nil || a.n != ev.Attempt {
				continue // canceled attempt
			}
			delete(x.running, ev.Node)
			err = x.input(ev)
		case <-ctx.Done():
			err = x.input(Event{Type: EvCancelRequested, Reason: "canceled: " + context.Cause(ctx).Error()})
		case <-deadline:
			err = x.input(Event{Type: EvBudgetExhausted, Kind: "timeout", Reason: fmt.Sprintf("run timeout %s", x.bp.Budget.Timeout)})
		case <-tick.C:
			if b, rerr := os.ReadFile(filepath.Join(x.dir, CancelFile)); rerr == nil {
				err = x.input(Event{Type: EvCancelRequested, Reason: CutText(strings.TrimSpace(x.redact.String(string(b))), MaxText, CancelFile)})
			}
		}
		if err != nil {
			return nil, x.abort(err)
		}
	}
	return x.finish()
}

// stopNodes cancels every running attempt and waits for them, up to the
// grace period, so no node outlives its run.
func (x *execution) stopNodes() error {
	x.stop()
	grace := x.rt.Grace
	if grace <= 0 {
		grace = 10 * time.Second
	}
	waited := make(chan struct{})
	go func() { x.wg.Wait(); close(waited) }()
	select {
	case <-waited:
		return nil
	case <-time.After(grace):
		return fmt.Errorf("some nodes ignored cancellation for %s", grace)
	}
}

// unjournaledCost is what attempts spent without a node_finished to
// journal it: attempts canceled mid-call (a parallel sibling's hand-off,
// a cancel) spent through their Spend, which the meter counted. Call it
// once the attempts have stopped.
func (x *execution) unjournaledCost() float64 {
	if x.meter == nil {
		return 0
	}
	x.meter.mu.Lock()
	defer x.meter.mu.Unlock()
	if d := x.meter.total - x.sched.cost; d > 1e-9 {
		return d
	}
	return 0
}

// abort ends a run that could not continue (journal I/O failure): nodes are
// stopped, and what was journaled stays for a later resume.
func (x *execution) abort(cause error) error {
	err := errors.Join(cause, x.stopNodes(), x.journal.Close(), x.closeEnv())
	x.endTrace()
	x.lock.Close()
	return err
}

// endTrace closes every open span and flushes the exporters.
func (x *execution) endTrace() {
	for id := range x.spans {
		x.endNodeSpan(id)
	}
	x.runSpan.End()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := x.shutdown(ctx); err != nil {
		x.rt.logger().Warn("trace export failed", "error", err)
	}
	if x.flushMetrics != nil {
		if err := x.flushMetrics(ctx); err != nil {
			x.rt.logger().Warn("metrics export failed", "error", err)
		}
		x.flushMetrics = nil
	}
}

// finish wraps the run up after its last node. Only a run handed to a
// person needs the change as a diff, so only such a run computes it; the
// time spent here is journaled (run_closed) and so counted and shown.
func (x *execution) finish() (*Summary, error) {
	// The lock goes last, after run.json and the hand-off report are written.
	defer x.lock.Close()
	t0 := time.Now()
	stopErr := x.stopNodes()
	var ch change
	if x.final != nil && x.final.Status == StatusHandedOff {
		ch = x.captureChange()
	}
	stopErr = errors.Join(stopErr, x.closeEnv())
	// A run that a person may still answer continues on this state.
	if x.env != nil && x.env.Discard != nil && !x.sched.answerable() {
		stopErr = errors.Join(stopErr, x.env.Discard())
	}
	closed := Event{Type: EvRunClosed, Time: time.Now(), DurationMS: time.Since(t0).Milliseconds(), Cost: x.unjournaledCost()}
	if _, err := x.record(closed); err != nil {
		return nil, errors.Join(err, x.journal.Close())
	}
	if err := x.journal.Close(); err != nil {
		return nil, err
	}
	x.endTrace()
	sum, err := Summarize(x.dir)
	if err != nil {
		return nil, err
	}
	if err := writeFiles(x.redact, x.dir, map[string][]byte{"run.json": mustJSON(sum)}); err != nil {
		return nil, err
	}
	if sum.Status == StatusHandedOff {
		if err := x.writeHandoff(sum, ch); err != nil {
			return sum, err
		}
	}
	// Last: while the pid file names a live process, watchers (run_status,
	// the inbox) say the harness is still wrapping up, so nobody reads a
	// handed-off run before its handoff.json exists (an MCP client did).
	_ = os.Remove(filepath.Join(x.dir, PIDFile))
	return sum, stopErr
}

// closeEnv tears the run's environment down (the sandbox's kill switch).
func (x *execution) closeEnv() error {
	if x.env == nil || x.env.Close == nil {
		return nil
	}
	err := x.env.Close()
	x.env.Close = nil
	return err
}
