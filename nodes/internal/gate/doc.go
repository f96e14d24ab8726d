// Package gate is how a gate judges the change and how the run remembers
// it: every gate node, built in or registered by an embedder, runs with
// the run's box held exclusively, on a change fingerprinted before it
// starts and checked after it ends for writes made meanwhile; it judges
// the candidate (the tree the commit will hold, ignored files left out),
// and every command it runs through the workspace runs in a judge box
// built fresh from the base snapshot and that tree, never in the agent's
// box; its verdict goes into the run's verdict ledger (verify.json), tied
// to that fingerprint and tree; and promotion passes only when every gate
// the blueprint puts before it passed on the change as it is now, and
// commits only the tree they judged. Held-out tests run here too, laid
// over the candidate in the judge box.
//
// It imports the workspace, gitstore, nodes/verdict and the runtime; it
// knows no node type's configuration, and must never import a node
// package (checks, testgate, promote, ci, review) or the nodes facade.
package gate
