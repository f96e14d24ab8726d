// Package temporal runs sandgate blueprints on Temporal.
//
// One workflow is one run. The workflow owns the run's runtime.Scheduler
// and feeds it from its own history: node results arrive as activity
// results, the budget timeout and retry backoff are workflow timers,
// canceling the workflow is the run's kill switch, and a handed-off run
// waits for an answer signal without holding a worker. The scheduler is a
// pure state machine, so replaying the history reproduces every decision.
//
// A run's sandbox lives on one worker host: the first activity (open)
// prepares the workspace wherever a worker takes it and returns that
// host's own task queue; every later activity of the run goes there
// (the worker-specific task queue pattern). When the host is gone (an
// activity waits past its schedule-to-start timeout, or stops
// heartbeating and cannot be rescheduled), the run moves: another host
// rebuilds the workspace from the base commit and the change the harness
// recorded after the last attempt (a patch and its fingerprint, kept in
// the workflow's history), checks the fingerprint, and runs the lost
// attempt again (move.go, movewf.go). A run whose change cannot be
// rebuilt is handed off with the reason.
//
// A long run continues as new past RunInput.ContinueAfter history
// events, carrying its journal (the scheduler's source of truth) once no
// node activity is in flight; runs started before that change never do
// (workflow.GetVersion), so their histories still replay.
//
// The host keeps the run directory (runtime.Remote): the journal in the
// local runtime's format, hand-off reports and run.json, so `sandgate
// show`, the inbox and answers read a Temporal run like a local one.
package temporal
