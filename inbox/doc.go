// Package inbox is the web inbox behind `sandgate serve`: a list of runs,
// a page per run (the blueprint's DAG with each node's state, the attempts
// as a waterfall, verification, outputs, logs, audits and the agent's
// transcript, updated live over server-sent events), the hand-offs waiting
// for a person and the local review queues.
//
// The runs list and `sandgate stats` read runs through inbox/index (the
// in-memory run index, its search, the journal fold); this package draws
// and serves them. It only reads run directories and review queues (their entries and
// verdicts through nodes/reviewqueue and nodes/verdict, which own those
// formats); the two things it can change, answering a hand-off and
// deciding a review, go through the injected Actions, so the package
// needs neither the nodes facade nor the sandbox. Pages
// are server-rendered with html/template; the only script is a small file
// served from the embedded assets that listens for live updates.
//
// Every path from a request is checked (ids are plain names, files are
// opened through os.Root so neither ".." nor a symlink leaves the runs
// directory), every state change carries a CSRF token and must be
// same-origin, and every response forbids inline script and style.
package inbox
