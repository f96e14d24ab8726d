package runfixture

import "strings"

// PushBranch is the branch PushBP commits to and pushes.
const PushBranch = "fix/hello"

// PushBP is a blueprint that edits hello.txt, commits the judged change
// to PushBranch and pushes it to remote (a path on disk).
func PushBP(remote string) string {
	return strings.NewReplacer("BRANCH", PushBranch, "REMOTE", remote).Replace(`version: 1
name: push
start: edit
nodes:
  edit: {type: shell, run: "echo changed > hello.txt", next: guard}
  guard: {type: protect, paths: ["ci/**"], on_pass: commit, on_fail: stuck}
  commit: {type: git_commit, branch: BRANCH, message: "fix hello", next: push}
  push: {type: git_push, remote: REMOTE, on_pass: done, on_fail: stuck}
  done: {type: succeed}
  stuck: {type: handoff}
`)
}
