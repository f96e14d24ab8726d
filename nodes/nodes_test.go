package nodes_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sandgate/sandgate/internal/gitfixture"
	"github.com/sandgate/sandgate/nodes"
	"github.com/sandgate/sandgate/runtime"
	"github.com/sandgate/sandgate/sandbox"
)

func TestMain(m *testing.M) {
	sandbox.Main()
	if spec := os.Getenv("SANDGATE_REVIEW_CHILD"); spec != "" {
		reviewChild(spec) // waits in a review until killed
	}
	os.Exit(m.Run())
}

// seedRepo makes a Go module with a bug (Add subtracts) and a failing test.
func seedRepo(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"go.mod":       "module calc\n\ngo 1.22\n",
		"calc.go":      "package calc\n\n// Add returns the sum of a and b.\nfunc Add(a, b int) int { return a - b }\n",
		"calc_test.go": "package calc\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif got := Add(2, 3); got != 5 {\n\t\tt.Fatalf(\"Add(2, 3) = %d, want 5\", got)\n\t}\n}\n\nfunc TestAddZero(t *testing.T) {\n\tif Add(0, 0) != 0 {\n\t\tt.Fatal(\"zero\")\n\t}\n}\n",
	}
	if err := gitfixture.Seed(dir, files, "calc with a bug"); err != nil {
		t.Fatal(err)
	}
	return dir
}

func run(t testing.TB, dir string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %v: %v\n%s", name, args, err, out)
	}
	return strings.TrimSpace(string(out))
}

type harness struct {
	rt   *runtime.Runtime
	repo string
}

func newHarness(t testing.TB, repo string) *harness { return newHarnessWith(t, repo, nodes.Options{}) }

// newHarnessWith is newHarness with the operator's options (allowances).
func newHarnessWith(t testing.TB, repo string, o nodes.Options) *harness {
	return &harness{repo: repo, rt: &runtime.Runtime{
		Registry: nodes.NewRegistryWith(o),
		RunsDir:  t.TempDir(),
		Prepare:  nodes.Environment(nodes.EnvOptions{Repo: repo, CacheDir: t.TempDir(), Caches: nodes.GoCaches()}),
	}}
}

func (h *harness) run(t *testing.T, src string, inputs map[string]any) *runtime.Summary {
	t.Helper()
	bp, err := h.rt.Registry.Parse("test.yaml", []byte(src))
	if err != nil {
		t.Fatalf("blueprint: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	sum, err := h.rt.Run(ctx, bp, runtime.RunOptions{Inputs: inputs, Workspace: h.repo})
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	return sum
}

func readVerify(t *testing.T, dir string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "verify.json"))
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	return v
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
	repo := seedRepo(t)
	before := run(t, repo, "git", "status", "--porcelain")
	remote := filepath.Join(t.TempDir(), "remote.git")
	run(t, "", "git", "clone", "-q", "--bare", repo, remote)
	reviews := t.TempDir()
	h := newHarness(t, repo)
	src := strings.NewReplacer("REMOTE", remote, "REVIEWS", reviews).Replace(pipeline)
	sum := h.run(t, src, nil)
	if sum.Status != runtime.StatusSucceeded {
		b, _ := json.MarshalIndent(sum, "", " ")
		t.Fatalf("run %s: %s\n%s", sum.Status, sum.Reason, b)
	}
	v := readVerify(t, sum.Dir)
	tests := v["tests"].(map[string]any)
	if v["lint"] != "pass" || tests["passed"] != 2.0 || tests["failed"] != 0.0 || v["pass"] != true {
		t.Fatalf("verify.json: %v", v)
	}
	branch := "sandgate/" + filepath.Base(sum.Dir)
	log := run(t, remote, "git", "log", "--format=%s", branch)
	if log != "fix: Add adds\ncalc with a bug" {
		t.Fatalf("remote branch log: %q", log)
	}
	if diff := run(t, remote, "git", "diff", "main", branch, "--stat"); !strings.Contains(diff, "calc.go | 2 +-") {
		t.Fatalf("remote diff: %s", diff)
	}
	entry, err := os.ReadFile(filepath.Join(reviews, filepath.Base(sum.Dir), "diff.patch"))
	if err != nil || !strings.Contains(string(entry), "+func Add(a, b int) int { return a + b }") {
		t.Fatalf("review entry: %v\n%s", err, entry)
	}
	if after := run(t, repo, "git", "status", "--porcelain"); after != before {
		t.Fatalf("the user's repository changed: %q", after)
	}
	if len(sum.Sandbox) == 0 || !strings.Contains(strings.Join(sum.Sandbox, ","), "landlock") {
		t.Fatalf("run.json does not record the isolation: %v", sum.Sandbox)
	}
}
