package reviewqueue_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sandgate/sandgate/internal/gitfixture"
	"github.com/sandgate/sandgate/nodes"
	"github.com/sandgate/sandgate/nodes/internal/nodetest"
)

// TestReviewChangedFilesMatchGit: the changed-file counts read from an
// entry's diff agree with git's own --numstat, on a diff built to confuse
// a line counter: removed lines that read "--- x", added lines that read
// "+++ y", a new, a deleted and a binary file, a quoted unicode path with a
// space, and a missing final newline.
func TestReviewChangedFilesMatchGit(t *testing.T) {
	dir := t.TempDir()
	base := map[string]string{"a.txt": "keep\n-- removed\nkeep\n", "gone.txt": "bye\n", "bin.dat": "\x00\x01", "sp ace/é.txt": "one\n", "nl.txt": "x\n"}
	if err := gitfixture.Seed(dir, base, "base"); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(dir, "gone.txt"))
	change := map[string]string{"a.txt": "keep\n++ added\nkeep\n+++ b/fake\n", "new.txt": "n1\nn2\n", "bin.dat": "\x00\x02", "sp ace/é.txt": "one\ntwo\n", "nl.txt": "x"}
	if err := gitfixture.Write(dir, change); err != nil {
		t.Fatal(err)
	}
	if err := gitfixture.Commit(dir, "dev", "change"); err != nil {
		t.Fatal(err)
	}
	diff := git(t, dir, "diff-tree", "-p", "-r", "--no-renames", "HEAD~1", "HEAD") + "\n"
	q := &nodes.ReviewQueue{Dir: t.TempDir()}
	nodetest.WriteEntry(t, q.Dir, nodetest.ReviewID, nodes.ReviewEntry{Title: "t", Status: nodes.StatusPending, Created: time.Now()})
	if err := os.WriteFile(filepath.Join(q.Dir, nodetest.ReviewID, "diff.patch"), []byte(diff), 0o644); err != nil {
		t.Fatal(err)
	}
	d, err := q.Get(nodetest.ReviewID)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]nodes.ChangedFile{}
	for _, f := range d.Files {
		got[f.Path] = f
	}
	numstat := git(t, dir, "diff-tree", "--numstat", "-z", "-r", "--no-renames", "HEAD~1", "HEAD")
	want := 0
	for _, rec := range strings.Split(strings.Trim(numstat, "\x00"), "\x00") {
		f := strings.SplitN(rec, "\t", 3)
		if len(f) != 3 {
			continue
		}
		want++
		g, ok := got[f[2]]
		added, _ := strconv.Atoi(f[0])
		deleted, _ := strconv.Atoi(f[1])
		switch {
		case !ok:
			t.Errorf("%q missing from %+v", f[2], d.Files)
		case f[0] == "-" && !g.Binary:
			t.Errorf("%q: want binary, got %+v", f[2], g)
		case f[0] != "-" && (g.Added != added || g.Deleted != deleted):
			t.Errorf("%q: got +%d -%d, git says +%d -%d", f[2], g.Added, g.Deleted, added, deleted)
		}
	}
	if want != 6 || len(d.Files) != want {
		t.Fatalf("files %+v, git lists %d", d.Files, want)
	}
}

// TestReviewSummaryFromRunDir: an entry queued without the agent's summary
// (an older entry) gets it from its run's run.json.
func TestReviewSummaryFromRunDir(t *testing.T) {
	run := t.TempDir()
	sum := `{"run_id":"r","attempts":[{"node":"implement","attempt":1,"outputs":{"summary":"first try"}},{"node":"implement","attempt":2,"outputs":{"summary":"fixed the sign"}},{"node":"test","attempt":1}]}`
	if err := os.WriteFile(filepath.Join(run, "run.json"), []byte(sum), 0o644); err != nil {
		t.Fatal(err)
	}
	q := &nodes.ReviewQueue{Dir: t.TempDir()}
	nodetest.WriteEntry(t, q.Dir, nodetest.ReviewID, nodes.ReviewEntry{Title: "t", Status: nodes.StatusPending, RunDir: run})
	if d, err := q.Get(nodetest.ReviewID); err != nil || d.Entry.AgentSummary != "fixed the sign" {
		t.Fatalf("agent summary %q, %v", d.Entry.AgentSummary, err)
	}
}
