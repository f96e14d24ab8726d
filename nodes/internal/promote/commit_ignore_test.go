package promote_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sandgate/sandgate/internal/gitfixture"
	"github.com/sandgate/sandgate/nodes"
	"github.com/sandgate/sandgate/nodes/internal/nodetest"
	"github.com/sandgate/sandgate/runtime"
)

// ignoreRepo is a repository whose .gitignore ignores generated code,
// build output and logs but one, with a log that is tracked all the same.
func ignoreRepo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{".gitignore": "gen_*.go\nout.bin\n*.log\n!important.log\n", "main.go": "package main\n",
		"main_test.go": "package main\n", "ci/build.yml": "steps: [test]\n"}
	if err := gitfixture.Seed(dir, files, "base"); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "tracked.log"), []byte("tracked though ignored\n"), 0o644)
	nodetest.Run(t, dir, "git", "add", "-f", "tracked.log")
	nodetest.Run(t, dir, "git", "-c", "user.name=dev", "-c", "user.email=dev@example.com", "commit", "-q", "-m", "track a log")
	return dir
}

const ignorePipeline = `version: 1
name: ignore
start: fix
nodes:
  fix: {type: shell, run: SCRIPT, next: guard}
  guard: {type: protect, paths: GUARD, on_pass: cap, on_fail: stuck}
  cap: {type: diff_cap, max_bytes: 4096, on_pass: commit, on_fail: stuck}
  commit: {type: git_commit, branch: fix/ignore, message: "add real.go", next: push}
  push: {type: git_push, remote: REMOTE, next: review}
  review: {type: review, dir: REVIEWS, next: done}
  done: {type: succeed}
  stuck: {type: handoff}
`

// nodeOutputs are the outputs of node's last finished attempt.
func nodeOutputs(t *testing.T, dir, node string) map[string]any {
	return lastFinished(t, dir, node).Outputs
}

func lastFinished(t *testing.T, dir, node string) runtime.Event {
	t.Helper()
	var last runtime.Event
	for _, ev := range nodetest.ReadEvents(t, dir) {
		if ev.Type == runtime.EvNodeFinished && ev.Node == node {
			last = ev
		}
	}
	return last
}

// ignoreRun runs ignorePipeline with script as the change, pushing to a
// new bare clone; it returns the summary, the remote and the review queue.
func ignoreRun(t *testing.T, repo, script string) (*runtime.Summary, string, string) {
	return ignoreRunGuarded(t, repo, script, `["ci/**", "*_test.go"]`)
}

// ignoreRunGuarded is ignoreRun with protect guarding paths (YAML).
func ignoreRunGuarded(t *testing.T, repo, script, paths string) (*runtime.Summary, string, string) {
	t.Helper()
	remote := filepath.Join(t.TempDir(), "remote.git")
	nodetest.Run(t, "", "git", "clone", "-q", "--bare", repo, remote)
	quoted, _ := json.Marshal(script)
	reviews := t.TempDir()
	src := strings.NewReplacer("SCRIPT", string(quoted), "REMOTE", remote, "REVIEWS", reviews, "GUARD", paths).Replace(ignorePipeline)
	return nodetest.NewHarness(t, repo).Run(t, src, nil), remote, reviews
}

// TestCommitLeavesIgnoredFilesOut: generated code, a 100 KB build output,
// a log and a file a nested .gitignore (added by the change itself)
// ignores never reach the remote; the tracked log and the re-included one
// do. diff_cap judges what leaves, so the big ignored file does not fail
// it, and the commit names what it left out.
func TestCommitLeavesIgnoredFilesOut(t *testing.T) {
	repo := ignoreRepo(t)
	script := "echo 'package main' > real.go && echo 'package main' > gen_x.go && head -c 100000 /dev/zero > out.bin && " +
		"mkdir -p dir && echo local.txt > dir/.gitignore && echo l > dir/local.txt && echo k > dir/kept.txt && " +
		"echo i > important.log && echo x > x.log && echo more >> tracked.log"
	sum, remote, reviews := ignoreRun(t, repo, script)
	if sum.Status != runtime.StatusSucceeded {
		t.Fatalf("run %s: %s", sum.Status, sum.Reason)
	}
	tree := nodetest.Run(t, remote, "git", "ls-tree", "-r", "--name-only", "fix/ignore")
	want := ".gitignore\nci/build.yml\ndir/.gitignore\ndir/kept.txt\nimportant.log\nmain.go\nmain_test.go\nreal.go\ntracked.log"
	if tree != want {
		t.Fatalf("pushed tree:\n%s\nwant:\n%s", tree, want)
	}
	if log := nodetest.Run(t, remote, "git", "show", "fix/ignore:tracked.log"); log != "tracked though ignored\nmore" {
		t.Fatalf("tracked.log: %q", log)
	}
	ignored := []any{"dir/local.txt", "gen_x.go", "out.bin", "x.log"}
	out := nodeOutputs(t, sum.Dir, "commit")
	if b, _ := json.Marshal(out["ignored"]); string(b) != mustJSON(t, ignored) || out["ignored_count"] != 4.0 {
		t.Fatalf("commit outputs: %v", out)
	}
	if cap := nodeOutputs(t, sum.Dir, "cap"); cap["ignored"] != 4.0 || cap["files"] != 5.0 {
		t.Fatalf("diff_cap outputs: %v", cap)
	}
	var rec struct {
		Ignored      []any `json:"ignored"`
		IgnoredCount int   `json:"ignored_count"`
	}
	b, err := os.ReadFile(filepath.Join(sum.Dir, "commit.json"))
	if err != nil || json.Unmarshal(b, &rec) != nil || mustJSON(t, rec.Ignored) != mustJSON(t, ignored) || rec.IgnoredCount != 4 {
		t.Fatalf("commit.json: %s (%v)", b, err)
	}
	patch, err := os.ReadFile(filepath.Join(reviews, filepath.Base(sum.Dir), "diff.patch"))
	if err != nil || !strings.Contains(string(patch), "b/real.go") || strings.Contains(string(patch), "out.bin") || strings.Contains(string(patch), "gen_x.go") {
		t.Fatalf("review diff: %v\n%s", err, patch)
	}
	// The reviewer is told what the box wrote that did not leave.
	summary, _ := os.ReadFile(filepath.Join(reviews, filepath.Base(sum.Dir), "summary.md"))
	if !strings.Contains(string(summary), "Left out of the commit") || !strings.Contains(string(summary), "gen_x.go") {
		t.Fatalf("review summary does not list the ignored files:\n%s", summary)
	}
	var entry nodes.ReviewEntry
	eb, _ := os.ReadFile(filepath.Join(reviews, filepath.Base(sum.Dir), "entry.json"))
	if json.Unmarshal(eb, &entry) != nil || entry.IgnoredCount != 4 {
		t.Fatalf("entry.json: %s", eb)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestAttackIgnoreToSlipPastProtect: the agent ignores the protected files
// it adds or edits, hoping protect judges only what leaves. A new test
// file whose TestMain exits 0 would fake the test gate's evidence even if
// it never left, so protect judges every file the box changed, ignored or
// not: the run must stop at protect and nothing reaches the remote. The
// tracked test file it edits would leave anyway (tracked stays tracked).
func TestAttackIgnoreToSlipPastProtect(t *testing.T) {
	repo := ignoreRepo(t)
	for name, script := range map[string]string{
		"new files": "printf 'ci/\\nzz_test.go\\n' >> .gitignore && mkdir -p ci && echo 'deploy: evil' > ci/deploy.yml && " +
			"printf 'package main\\nimport (\"os\";\"testing\")\\nfunc TestMain(m *testing.M) { os.Exit(0) }\\n' > zz_test.go",
		"tracked file": "echo main_test.go >> .gitignore && echo '// weakened' >> main_test.go",
	} {
		t.Run(name, func(t *testing.T) {
			sum, remote, _ := ignoreRun(t, repo, script)
			guard := lastFinished(t, sum.Dir, "guard")
			if sum.Status != runtime.StatusHandedOff || guard.Outcome != runtime.OutcomeFail {
				t.Fatalf("run %s (%s), protect %s %v: the ignored protected files slipped past protect", sum.Status, sum.Reason, guard.Outcome, guard.Outputs)
			}
			if out := nodetest.Run(t, remote, "git", "branch", "--list", "fix/ignore"); out != "" {
				t.Fatalf("the branch reached the remote: %q", out)
			}
		})
	}
	// Without protect, the new ignored files still never leave; the
	// .gitignore edit that hid them does, for reviewers to see.
	sum, remote, _ := ignoreRunGuarded(t, repo, "printf 'ci/\\nzz_test.go\\n' >> .gitignore && mkdir -p ci && echo x > ci/deploy.yml && echo x > zz_test.go && echo ok > real.go", `["other/**"]`)
	if sum.Status != runtime.StatusSucceeded {
		t.Fatalf("run %s: %s", sum.Status, sum.Reason)
	}
	tree := nodetest.Run(t, remote, "git", "ls-tree", "-r", "--name-only", "fix/ignore")
	if strings.Contains(tree, "zz_test.go") || strings.Contains(tree, "deploy.yml") || !strings.Contains(tree, "real.go") {
		t.Fatalf("pushed tree:\n%s", tree)
	}
	if gi := nodetest.Run(t, remote, "git", "show", "fix/ignore:.gitignore"); !strings.HasSuffix(gi, "ci/\nzz_test.go") {
		t.Fatalf("pushed .gitignore: %q", gi)
	}
}

// TestCommitOfOnlyIgnoredFilesIsEmpty: a change of nothing but ignored
// files commits nothing and says why.
func TestCommitOfOnlyIgnoredFilesIsEmpty(t *testing.T) {
	repo := ignoreRepo(t)
	sum, remote, _ := ignoreRun(t, repo, "echo x > gen_x.go && echo y > out.bin")
	ev := lastFinished(t, sum.Dir, "commit")
	if ev.Outcome != runtime.OutcomeFail || !strings.Contains(ev.Feedback, "all ignored") || !strings.Contains(ev.Feedback, "gen_x.go, out.bin") {
		t.Fatalf("commit: %s %q %v", ev.Outcome, ev.Feedback, ev.Outputs)
	}
	if out := nodetest.Run(t, remote, "git", "branch", "--list", "fix/ignore"); out != "" {
		t.Fatalf("a branch reached the remote: %q", out)
	}
}
