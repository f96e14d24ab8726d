package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sandgate/sandgate/sandbox"
)

// pruneFixture lays out runs, review entries and snapshots of known ages.
type pruneFixture struct {
	runs, reviews, cache string
	leased               *sandbox.SnapshotLease
	idle                 string // an unleased old snapshot
}

func newPruneFixture(t *testing.T) *pruneFixture {
	f := &pruneFixture{runs: t.TempDir(), reviews: t.TempDir(), cache: t.TempDir()}
	old := time.Now().Add(-30 * 24 * time.Hour)
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	runs := []struct {
		name string
		age  time.Duration
		pid  int
	}{
		{"r1-old-done", 40 * 24 * time.Hour, 0},
		{"r2-old-aborted", 35 * 24 * time.Hour, dead.Process.Pid},
		{"r3-old-running", 30 * 24 * time.Hour, os.Getpid()},
		{"r4-new-done", time.Hour, 0},
	}
	for _, r := range runs {
		dir := filepath.Join(f.runs, r.name)
		os.MkdirAll(filepath.Join(dir, "box"), 0o755)
		os.WriteFile(filepath.Join(dir, "box", "disk.img"), make([]byte, 64<<10), 0o644)
		if r.pid != 0 {
			os.WriteFile(filepath.Join(dir, "pid"), []byte(fmt.Sprint(r.pid)), 0o644)
		}
		j := filepath.Join(dir, "events.jsonl")
		os.WriteFile(j, []byte("{}\n"), 0o644)
		at := time.Now().Add(-r.age)
		os.Chtimes(j, at, at)
	}
	for id, status := range map[string]string{"rv-decided": "rejected", "rv-pending": "pending"} {
		os.MkdirAll(filepath.Join(f.reviews, id), 0o755)
		entry := fmt.Sprintf(`{"id":%q,"status":%q,"created":%q}`, id, status, old.Format(time.RFC3339))
		os.WriteFile(filepath.Join(f.reviews, id, "entry.json"), []byte(entry), 0o644)
	}
	repo := gitRepo(t)
	idle, _, err := sandbox.Snapshot(context.Background(), repo, "HEAD", f.cache)
	if err != nil {
		t.Fatal(err)
	}
	f.idle = idle
	// The leased snapshot is another repository's: one of the same
	// repository would be a layer over the idle one, which its lease
	// then holds too.
	other := gitRepo(t)
	os.WriteFile(filepath.Join(other, "more.txt"), []byte("x"), 0o644)
	exec.Command("git", "-C", other, "add", ".").Run()
	exec.Command("git", "-C", other, "-c", "user.name=d", "-c", "user.email=d@d", "commit", "-q", "-m", "more").Run()
	if f.leased, err = sandbox.LeaseSnapshot(context.Background(), other, "HEAD", f.cache); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.leased.Release() })
	for _, d := range []string{idle, f.leased.Dir} {
		os.Chtimes(d+".lock", old, old)
	}
	return f
}

func (f *pruneFixture) prune(args ...string) (int, string, string) {
	return runCLI(append([]string{"prune", "--runs-dir", f.runs, "--reviews-dir", f.reviews, "--cache-dir", f.cache}, args...)...)
}

func exists(p string) bool { _, err := os.Stat(p); return err == nil }

func TestPrune(t *testing.T) {
	f := newPruneFixture(t)
	code, out, errs := f.prune("--dry-run")
	if code != exitOK {
		t.Fatalf("exit %d: %s%s", code, out, errs)
	}
	for _, want := range []string{"r1-old-done", "r2-old-aborted", "rv-decided", filepath.Base(f.idle), "would remove 4 item(s)"} {
		if !strings.Contains(out, want) {
			t.Errorf("dry run does not list %s:\n%s", want, out)
		}
	}
	for _, never := range []string{"r3-old-running", "r4-new-done", "rv-pending"} {
		if strings.Contains(out, never) {
			t.Errorf("dry run lists %s:\n%s", never, out)
		}
	}
	// The snapshot a live run holds is never to be removed, and prune
	// says it kept it.
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, f.leased.Commit) && !strings.HasPrefix(line, "kept snapshot "+f.leased.Commit) {
			t.Errorf("dry run lists the leased snapshot other than as kept: %s", line)
		}
	}
	if !strings.Contains(out, "kept snapshot "+f.leased.Commit+" of ") || !strings.Contains(out, "a live run holds it") {
		t.Errorf("dry run does not say it kept the leased snapshot:\n%s", out)
	}
	if !exists(filepath.Join(f.runs, "r1-old-done")) || !exists(f.idle) || !exists(filepath.Join(f.reviews, "rv-decided")) {
		t.Fatal("dry run deleted something")
	}
	// --keep 3 keeps the three newest runs (the live one among them).
	if _, out, _ := f.prune("--dry-run", "--keep", "3"); strings.Contains(out, "r2-old-aborted") || !strings.Contains(out, "r1-old-done") {
		t.Errorf("--keep 3:\n%s", out)
	}
	// --older-than 60 days: nothing of ours is that old, but the live
	// run would not go even then.
	if _, out, _ := f.prune("--dry-run", "--older-than", "1440h"); !strings.Contains(out, "would remove 0 item(s)") {
		t.Errorf("--older-than 1440h:\n%s", out)
	}
	code, out, errs = f.prune("--older-than", "0s")
	if code != exitOK {
		t.Fatalf("exit %d: %s%s", code, out, errs)
	}
	gone := []string{filepath.Join(f.runs, "r1-old-done"), filepath.Join(f.runs, "r2-old-aborted"), filepath.Join(f.runs, "r4-new-done"),
		filepath.Join(f.reviews, "rv-decided"), f.idle}
	for _, p := range gone {
		if exists(p) {
			t.Errorf("%s not pruned:\n%s", p, out)
		}
	}
	for _, p := range []string{filepath.Join(f.runs, "r3-old-running", "box", "disk.img"), filepath.Join(f.reviews, "rv-pending"), filepath.Join(f.leased.Dir, "more.txt")} {
		if !exists(p) {
			t.Errorf("BREACH: prune removed %s, which is live or pending:\n%s", p, out)
		}
	}
	if !strings.Contains(out, "removed 5 item(s)") {
		t.Errorf("report:\n%s", out)
	}
}

// TestRunDirAfterFinishIsSmall: a finished run keeps its change, logs and
// records, not its box's disk image or caches.
func TestRunDirAfterFinishIsSmall(t *testing.T) {
	repo, runs := gitRepo(t), t.TempDir()
	ok := writeBlueprint(t, strings.Replace(cliBlueprint, "FIX", "sed -i 's/a - b/a + b/' calc.go", 1))
	if code, out, errs := runCLI("run", ok, "--repo", repo, "--runs-dir", runs); code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	dirs, _ := filepath.Glob(filepath.Join(runs, "*"))
	if len(dirs) != 1 {
		t.Fatalf("run dirs %v", dirs)
	}
	if n := diskUsage(dirs[0]); n > 2<<20 {
		out, _ := exec.Command("du", "-a", dirs[0]).Output()
		t.Fatalf("finished run dir holds %s:\n%s", humanBytes(n), out)
	}
	if exists(filepath.Join(dirs[0], "box", "disk.img")) {
		t.Fatal("finished run kept its disk image")
	}
}

// TestPruneDefaultsToRepoState: without --runs-dir and --reviews-dir,
// prune works on the records `sandgate run` keeps for the current
// repository (under $XDG_STATE_HOME), not on ./.sandgate.
func TestPruneDefaultsToRepoState(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	repo := gitRepo(t)
	root, err := repoRoot(repo)
	if err != nil {
		t.Fatal(err)
	}
	run := filepath.Join(stateDir(root), "runs", "r-old")
	review := filepath.Join(stateDir(root), "reviews", "rv-old")
	old := time.Now().Add(-30 * 24 * time.Hour)
	for _, f := range []struct{ path, body string }{
		{filepath.Join(run, "events.jsonl"), "{}\n"},
		{filepath.Join(review, "entry.json"), fmt.Sprintf(`{"id":"rv-old","status":"approved","created":%q}`, old.Format(time.RFC3339))},
	} {
		os.MkdirAll(filepath.Dir(f.path), 0o755)
		if err := os.WriteFile(f.path, []byte(f.body), 0o644); err != nil {
			t.Fatal(err)
		}
		os.Chtimes(f.path, old, old)
	}
	var code int
	var out, errs string
	inDir(t, repo, func() { code, out, errs = runCLI("prune", "--cache-dir", t.TempDir()) })
	if code != exitOK || !strings.Contains(out, "removed 2 item(s)") || exists(run) || exists(review) {
		t.Fatalf("exit %d; the repository's old run and review should be gone:\n%s%s", code, out, errs)
	}
}
