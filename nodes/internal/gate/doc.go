// Package gate is how a gate judges the change and how the run remembers
// it: every gate node, built in or registered by an embedder, runs with
// the box held exclusively, on a change fingerprinted before it starts
// and checked after it ends for writes made meanwhile; its verdict goes
// into the run's verdict ledger (verify.json), tied to that fingerprint;
// and promotion passes only when every gate the blueprint puts before it
// passed on the change as it is now. Held-out tests run here too, in a
// throwaway box built from the change, never in the run's.
//
// It imports the workspace, nodes/verdict and the runtime; it knows no
// node type's configuration, and must never import a node package
// (checks, testgate, promote, ci, review) or the nodes facade.
package gate
