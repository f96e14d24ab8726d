package nodes_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sandgate/sandgate/nodes/internal/nodetest"
	"github.com/sandgate/sandgate/runtime"
	"github.com/sandgate/sandgate/sandbox"
)

func TestMain(m *testing.M) {
	sandbox.Main()
	os.Exit(m.Run())
}

const pipeline = `version: 1
name: gates
start: fix
nodes:
  fix: {type: shell, run: "sed -i 's/a - b/a + b/' calc.go", next: lint}
  lint:
    type: lint
    run: ["gofmt -l .", "go vet ./..."]
    on_pass: cap
    on_fail: stuck
  cap: {type: diff_cap, max_lines: 10, on_pass: test, on_fail: stuck}
  test:
    type: test
    run: go test -json ./...
    edges:
      - {to: commit, when: "outputs.test.failed == 0"}
      - {to: stuck}
  commit: {type: git_commit, message: "fix: Add adds", next: push}
  push: {type: git_push, remote: REMOTE, next: review}
  review: {type: review, dir: REVIEWS, next: done}
  done: {type: succeed}
  stuck: {type: handoff, reason: a gate failed}
`

func TestGatesCommitPushReview(t *testing.T) {
	repo := nodetest.SeedRepo(t)
	before := nodetest.Run(t, repo, "git", "status", "--porcelain")
	remote := filepath.Join(t.TempDir(), "remote.git")
	nodetest.Run(t, "", "git", "clone", "-q", "--bare", repo, remote)
	reviews := t.TempDir()
	h := nodetest.NewHarness(t, repo)
	src := strings.NewReplacer("REMOTE", remote, "REVIEWS", reviews).Replace(pipeline)
	sum := h.Run(t, src, nil)
	if sum.Status != runtime.StatusSucceeded {
		b, _ := json.MarshalIndent(sum, "", " ")
		t.Fatalf("run %s: %s\n%s", sum.Status, sum.Reason, b)
	}
	v := nodetest.ReadVerify(t, sum.Dir)
	tests := v["tests"].(map[string]any)
	if v["lint"] != "pass" || tests["passed"] != 2.0 || tests["failed"] != 0.0 || v["pass"] != true {
		t.Fatalf("verify.json: %v", v)
	}
	branch := "sandgate/" + filepath.Base(sum.Dir)
	log := nodetest.Run(t, remote, "git", "log", "--format=%s", branch)
	if log != "fix: Add adds\ncalc with a bug" {
		t.Fatalf("remote branch log: %q", log)
	}
	if diff := nodetest.Run(t, remote, "git", "diff", "main", branch, "--stat"); !strings.Contains(diff, "calc.go | 2 +-") {
		t.Fatalf("remote diff: %s", diff)
	}
	entry, err := os.ReadFile(filepath.Join(reviews, filepath.Base(sum.Dir), "diff.patch"))
	if err != nil || !strings.Contains(string(entry), "+func Add(a, b int) int { return a + b }") {
		t.Fatalf("review entry: %v\n%s", err, entry)
	}
	if after := nodetest.Run(t, repo, "git", "status", "--porcelain"); after != before {
		t.Fatalf("the user's repository changed: %q", after)
	}
	if len(sum.Sandbox) == 0 || !strings.Contains(strings.Join(sum.Sandbox, ","), "landlock") {
		t.Fatalf("run.json does not record the isolation: %v", sum.Sandbox)
	}
}
