package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sandgate/sandgate/internal/golden"
	"github.com/sandgate/sandgate/nodes"
)

const showID = "20250101-120000-abcdef"

// fixedEntry writes a queue entry whose every field is fixed, for the
// golden output.
func fixedEntry(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "reviews")
	files := map[string]string{
		"entry.json": `{"id":"` + showID + `","title":"fix: Add adds","branch":"fix/add","commit":"4b825dc642cb6eb9a060e54bf8d69288fbee4904",
"base":"a94a8fe5ccb19ba61c4c0873d391e987982fbbd3","run_dir":"/srv/sandgate/runs/` + showID + `","status":"pending","created":"2025-01-01T12:00:00Z",
"agent_summary":"Add returned a - b; it now returns a + b.\nDouble was right all along.",
"on_approve":{"merge_into":"main","method":"ff","remote":"https://x-access-token:secret@git.example/calc.git"}}`,
		"verify.json": `{"pass":false,"tests":{"passed":12,"failed":0,"skipped":1,"pass":true},"lint":"pass","diff":"fail","duration_ms":4200,"gates":{
"test":{"node":"test","kind":"tests","pass":true,"tests":{"passed":12,"failed":0,"skipped":1},"duration_ms":3000,"fingerprint":"x"},
"lint":{"node":"lint","kind":"lint","pass":true,"duration_ms":700,"fingerprint":"x"},
"diff_cap":{"node":"diff_cap","kind":"diff","pass":false,"reason":"  241 lines changed,\n over the cap of 200","details":{"lines":241,"max_lines":200},"duration_ms":1,"fingerprint":"x"}}}`,
		"diff.patch": "diff --git a/calc.go b/calc.go\nindex 1111111..2222222 100644\n--- a/calc.go\n+++ b/calc.go\n@@ -1,3 +1,3 @@\n package calc\n \n-func Add(a, b int) int { return a - b }\n+func Add(a, b int) int { return a + b }\ndiff --git a/NOTES b/NOTES\nnew file mode 100644\nindex 0000000..3333333\n--- /dev/null\n+++ b/NOTES\n@@ -0,0 +1,2 @@\n+--- not a header\n+fixed Add\n",
		"summary.md": "## fix: Add adds\n",
	}
	if err := os.MkdirAll(filepath.Join(dir, showID), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, showID, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestReviewShowGolden: show prints the title, the verdict as a table,
// the changed files, the agent's summary (quoted) and the diff; a password in the
// remote's URL stays hidden. --format json carries the same for machines.
func TestReviewShowGolden(t *testing.T) {
	dir := fixedEntry(t)
	code, out, errs := runCLI("review", "show", showID, "--dir", dir)
	if code != exitOK {
		t.Fatalf("show: exit %d\n%s", code, errs)
	}
	if strings.Contains(out, "secret") {
		t.Fatalf("BREACH: show printed the remote's password:\n%s", out)
	}
	golden.Compare(t, filepath.Join("testdata", "review_show.golden"), out, *update)

	code, out, _ = runCLI("review", "show", showID, "--dir", dir, "--format", "json")
	var d nodes.ReviewDetail
	if err := json.Unmarshal([]byte(out), &d); code != exitOK || err != nil || d.Entry.ID != showID || len(d.Files) != 2 || len(d.Gates) != 3 || d.Files[1].Added != 2 {
		t.Fatalf("show --format json: exit %d, %v\n%s", code, err, out)
	}
	for _, id := range []string{"../" + filepath.Base(dir), "..", "a/b"} {
		if code, _, errs := runCLI("review", "show", id, "--dir", dir); code != exitUsage || !strings.Contains(errs, "not a review entry id") {
			t.Errorf("show %q: exit %d %q", id, code, errs)
		}
	}
}

// Its gate is a diff_cap: promotion needs a passing verdict, and what is
// checked here is the CLI's, not a test gate's (which would cost a judge
// box running go test on every run).
const approveBlueprint = `version: 1
name: approve
start: fix
nodes:
  fix: {type: shell, run: "sed -i 's/a - b/a + b/' calc.go", next: cap}
  cap: {type: diff_cap, max_lines: 20, on_pass: commit, on_fail: stuck}
  commit: {type: git_commit, branch: fix/add, message: "fix: Add adds", next: PROMOTE}
PUSH  review: {type: review, dir: REVIEWS, on_approve: ON_APPROVE, next: done}
  done: {type: succeed}
  stuck: {type: handoff}
`

// TestReviewApproveLandsOnRemote: approving from the CLI fast-forwards
// the remote's main to the reviewed commit: through the branch git_push
// pushed, and, without a push, from the run's own repository to the
// remote on_approve names.
func TestReviewApproveLandsOnRemote(t *testing.T) {
	const push = "  push: {type: git_push, remote: REMOTE, next: review}\n"
	for _, tc := range []struct{ name, promote, push, onApprove string }{
		{"pushed", "push", push, "{merge_into: main}"},
		{"not pushed", "review", "", "{merge_into: main, remote: REMOTE}"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			repo, runs, reviews := gitRepo(t), t.TempDir(), t.TempDir()
			remote := bareClone(t, repo)
			src := strings.NewReplacer("PROMOTE", tc.promote, "PUSH", tc.push, "ON_APPROVE", tc.onApprove).Replace(approveBlueprint)
			src = strings.NewReplacer("REMOTE", remote, "REVIEWS", reviews).Replace(src)
			if code, out, errs := runCLI("run", writeBlueprint(t, src), "--repo", repo, "--runs-dir", runs); code != exitOK {
				t.Fatalf("run: exit %d\n%s\n%s\n%s", code, out, errs, src)
			}
			entries, err := (&nodes.ReviewQueue{Dir: reviews}).List()
			if err != nil || len(entries) != 1 {
				t.Fatalf("entries %+v %v", entries, err)
			}
			e := entries[0]
			code, out, errs := runCLI("review", "approve", e.ID, "--dir", reviews, "--by", "alice", "--note", "ship it")
			main, _ := exec.Command("git", "--git-dir="+remote, "rev-parse", "refs/heads/main").Output()
			if code != exitOK || strings.TrimSpace(string(main)) != e.Commit || !strings.Contains(out, "main on "+remote+" is now "+e.Commit[:12]) {
				t.Fatalf("approve: exit %d, main %s, want %s\n%s%s", code, main, e.Commit, out, errs)
			}
			code, _, errs = runCLI("review", "approve", e.ID, "--dir", reviews)
			if code != exitFailed || !strings.Contains(errs, "already decided: it is approved by alice") {
				t.Fatalf("second approve: exit %d %q", code, errs)
			}
		})
	}
}
