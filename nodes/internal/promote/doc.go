// Package promote is how a judged change leaves the box: git_commit
// writes it as a commit in the run's promotion repository (as git add -A
// would stage it, never with a credential's value in it) and records it
// in commit.json; git_push sends that commit from the harness, with a
// token the box never sees, and records it in the run's push ledger
// (push.json, and the pushes a rejection deletes). Start is the check
// every promotion node makes first: the verdict ledger passed on the
// change as it is now, and the recorded commit holds exactly that change.
//
// It imports the workspace, gate, gitstore and gitremote; it must never
// import ci, review, reviewqueue or the nodes facade.
package promote
