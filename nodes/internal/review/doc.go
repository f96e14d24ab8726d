// Package review is the review node: it hands the verified, committed
// change to people, as an entry in the local review queue
// (nodes/reviewqueue) or a GitHub pull request, updates the same entry or
// pull request when the run commits again, and, with wait, waits for the
// decision (surviving a restart) and brings "changes requested" back to
// the agent as bounded, printable feedback. Only the repository's owner,
// members and collaborators decide on GitHub.
//
// It imports the workspace, gate, promote, reviewqueue and the internal
// github package; it must never import ci or the nodes facade.
package review
