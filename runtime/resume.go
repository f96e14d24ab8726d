package runtime

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/sandgate/sandgate/blueprint"
)

// Resume continues a run from its directory after a crash: it replays the
// journal through a fresh scheduler, checks that the replay reproduces every
// recorded decision, carries out decisions the crash cut off, and re-runs
// nodes that were started but never finished. Completed nodes never run
// again. Resuming a finished run returns its summary and does nothing.
func (rt *Runtime) Resume(ctx context.Context, dir string) (*Summary, error) {
	s, err := rt.lockAndLoad(dir, func(events []Event) (bool, error) { return !finished(events), nil })
	if err != nil || s == nil {
		if err == nil {
			return Summarize(dir)
		}
		return nil, err
	}
	x, err := rt.reopen(ctx, s)
	if err != nil {
		return nil, err
	}
	if _, err := x.record(Event{Type: EvRunResumed, Time: time.Now()}); err != nil {
		return nil, x.abort(err)
	}
	if err := x.flushInfo(); err != nil {
		return nil, x.abort(err)
	}
	// Nodes recorded as started but not finished were cut off: run them
	// again under the same attempt number.
	cut := x.sched.InFlight()
	for _, c := range s.pending {
		if c.Type == EvNodeStarted {
			delete(cut, c.Node)
		}
	}
	for _, id := range sortedIDs(cut) {
		x.launch(id, cut[id], x.sched.feedback[id], 0)
	}
	if err := x.dispatch(s.pending); err != nil {
		return nil, x.abort(err)
	}
	return x.loop(ctx)
}

// readRun reads a run directory's journal.
func readRun(dir string) ([]Event, error) {
	events, err := ReadJournal(filepath.Join(dir, "events.jsonl"))
	if err != nil {
		return nil, err
	}
	if len(events) == 0 || events[0].Type != EvRunStarted {
		return nil, fmt.Errorf("%s: journal has no run_started event", dir)
	}
	return events, nil
}

// lockAndLoad takes the run's lock (lockRun), then reads its journal and,
// when want says so, loads it; the journal is read under the lock, so
// what is loaded is what the execution continues. Without an error, a nil
// saved means want declined, and the lock is released.
func (rt *Runtime) lockAndLoad(dir string, want func([]Event) (bool, error)) (*saved, error) {
	dir = absDir(dir) // as runsDir: nodes work in other directories
	lock, err := lockRun(dir)
	if err != nil {
		return nil, err
	}
	s, err := rt.readAndLoad(dir, want)
	if err != nil || s == nil {
		lock.Close()
		return nil, err
	}
	s.lock = lock
	return s, nil
}

func (rt *Runtime) readAndLoad(dir string, want func([]Event) (bool, error)) (*saved, error) {
	events, err := readRun(dir)
	if err != nil {
		return nil, err
	}
	if ok, err := want(events); !ok || err != nil {
		return nil, err
	}
	return rt.load(dir, events)
}

// saved is a run as its directory records it, replayed: the scheduler is
// where the journal left it, pending the decisions a crash cut off.
type saved struct {
	lock    *os.File
	dir     string
	events  []Event
	meta    meta
	bp      *blueprint.Blueprint
	sched   *Scheduler
	pending []Event
}

// load reads a run's meta and saved blueprint and replays its journal.
func (rt *Runtime) load(dir string, events []Event) (*saved, error) {
	s := &saved{dir: dir, events: events}
	if err := readJSON(filepath.Join(dir, "meta.json"), &s.meta); err != nil {
		return nil, fmt.Errorf("%s: read meta.json: %w", dir, err)
	}
	bp, err := rt.Registry.Load(filepath.Join(dir, "blueprint.yaml"))
	if err != nil {
		return nil, fmt.Errorf("%s: the saved blueprint no longer validates: %w", dir, err)
	}
	s.bp, s.sched = bp, NewScheduler(bp)
	if s.pending, err = replay(s.sched, events); err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	return s, nil
}

// reopen continues a saved run's execution (Resume and Answer): it opens
// the journal for appending and prepares the environment with resume set,
// so the run works on its workspace as it left it.
func (rt *Runtime) reopen(ctx context.Context, s *saved) (*execution, error) {
	nodes, err := rt.Registry.build(s.bp)
	if err != nil {
		s.lock.Close()
		return nil, err
	}
	x, err := rt.newExecution(s.bp, nodes, s.dir, s.meta, s.events[len(s.events)-1].Seq, s.lock)
	if err != nil {
		return nil, err
	}
	x.sched = s.sched
	if err := x.prepare(ctx, true); err != nil {
		return nil, x.abort(err)
	}
	x.started = budgetStart(s.events)
	return x, nil
}

// budgetStart is when the run's timeout started counting: the run's start
// or its latest answer.
func budgetStart(events []Event) time.Time {
	for i := len(events) - 1; i >= 0; i-- {
		if t := events[i].Type; t == EvAnswered || t == EvRunStarted {
			return events[i].Time
		}
	}
	return time.Time{}
}

// finished reports whether a journal ends with the run's end: its
// run_finished decision, or the run_closed wrap-up after it.
func finished(events []Event) bool {
	t := events[len(events)-1].Type
	return t == EvRunFinished || t == EvRunClosed
}

// replay feeds recorded inputs to a scheduler, checks its commands against
// the recorded ones, and returns the commands the journal does not have yet.
func replay(s *Scheduler, events []Event) ([]Event, error) {
	var recorded, produced []Event
	for _, ev := range events {
		switch {
		case ev.Type.IsInput():
			cmds, err := s.Apply(ev)
			if err != nil {
				return nil, err
			}
			produced = append(produced, cmds...)
		case ev.Type != EvRunResumed && ev.Type != EvEnvironment && ev.Type != EvRunClosed:
			recorded = append(recorded, ev)
		}
	}
	if len(recorded) > len(produced) {
		return nil, fmt.Errorf("journal has %d decisions, replay produced %d: the journal does not belong to this blueprint", len(recorded), len(produced))
	}
	for i, r := range recorded {
		if !sameDecision(r, produced[i]) {
			return nil, fmt.Errorf("replay diverged at decision %d: journal has %s %s#%d→%s, replay made %s %s#%d→%s",
				i, r.Type, r.Node, r.Attempt, r.To, produced[i].Type, produced[i].Node, produced[i].Attempt, produced[i].To)
		}
	}
	return produced[len(recorded):], nil
}

// sameDecision compares the fields a decision is made of.
func sameDecision(a, b Event) bool {
	return a.Type == b.Type && a.Node == b.Node && a.Attempt == b.Attempt && a.Edge == b.Edge &&
		a.To == b.To && a.Count == b.Count && a.Status == b.Status && a.Kind == b.Kind &&
		a.Reason == b.Reason && a.Feedback == b.Feedback && a.DelayMS == b.DelayMS
}

// Replay checks that a finished or crashed journal is reproduced exactly by
// the scheduler, returning the first divergence. Hosting engines (and tests)
// use it to prove decisions depend on recorded events only.
func Replay(bp *blueprint.Blueprint, events []Event) error {
	pending, err := replay(NewScheduler(bp), events)
	if err != nil {
		return err
	}
	if len(pending) > 0 && finished(events) {
		return fmt.Errorf("replay produced %d decisions after the run finished", len(pending))
	}
	return nil
}
