// Package runtime runs a validated blueprint as a DAG with bounded retry
// edges, budgets, a hand-off-to-human terminal state and a durable journal.
//
// The design separates deciding from doing. A [Scheduler] is a pure state
// machine: it consumes recorded events (a node finished, a budget ran out, a
// cancel was requested) and returns the commands that follow (start this
// node, take this edge, finish the run). The [Runtime] executes those
// commands, appends every event to the run's journal (events.jsonl) before
// acting on it, and feeds the results back. Because decisions are a function
// of the blueprint and the recorded events only, a crashed run resumes by
// replaying its journal, and the same scheduler could be hosted by a
// durable-execution engine with nodes as activities.
//
// Node types plug in through a [Registry] owned by the embedder; this
// package never imports the built-in nodes.
package runtime
