package workspace_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sandgate/sandgate/nodes"
	"github.com/sandgate/sandgate/nodes/internal/nodetest"
	"github.com/sandgate/sandgate/runtime"
	"github.com/sandgate/sandgate/sandbox"
)

// warmRun runs src over repo with the harness's cache in cache; cold
// turns warm builds off.
func warmRun(t *testing.T, repo, cache, src string, cold bool) *runtime.Summary {
	t.Helper()
	rt := &runtime.Runtime{Registry: nodes.NewRegistryWith(nodes.Options{}), RunsDir: t.TempDir(),
		Prepare: nodes.Environment(nodes.EnvOptions{Repo: repo, CacheDir: cache, Caches: nodes.GoCaches(), ColdBuilds: cold})}
	bp, err := rt.Registry.Parse("warm.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	sum, err := rt.Run(ctx, bp, runtime.RunOptions{Workspace: repo})
	if err != nil {
		t.Fatal(err)
	}
	return sum
}

// stale passes when the box's go build compiles nothing (the
// repository's package is in a build cache the box sees), fails when it
// runs the compiler.
const stale = `version: 1
name: stale
start: look
nodes:
  look: {type: shell, run: "go build -x ./... 2>&1 | grep 'pkg/tool/.*/compile ' && exit 1 || exit 0", on_pass: done, on_fail: no}
  done: {type: succeed}
  no: {type: fail}
`

// TestWarmBuildsReachEveryBox: a run warms the repository's build cache
// once for its commit, and the next run's box finds the repository's
// packages built; with warm builds off, it finds them unbuilt (the
// host's cache has never built them), so the check can fail.
func TestWarmBuildsReachEveryBox(t *testing.T) {
	repo, cache := nodetest.SeedRepo(t), t.TempDir()
	if sum := warmRun(t, repo, cache, stale, true); sum.Status != runtime.StatusFailed {
		t.Fatalf("with cold builds the box found the package built: %s", sum.Status)
	}
	warmRun(t, repo, cache, stale, false) // warms
	marks, _ := filepath.Glob(filepath.Join(cache, "gowarm", "warmed", "*"))
	if len(marks) != 1 {
		t.Fatalf("warmed markers %v, want one for the commit", marks)
	}
	if sum := warmRun(t, repo, cache, stale, false); sum.Status != runtime.StatusSucceeded {
		node, fb := sum.LastFeedback()
		t.Fatalf("the second run's box builds cold: %s (%s: %s)", sum.Status, node, fb)
	}
	if !strings.Contains(marks[0], nodetest.Run(t, repo, "git", "rev-parse", "HEAD")) {
		t.Fatalf("marker %s is not the commit's", marks[0])
	}
}

// forge is an agent command that writes into the box's build cache what a
// poisoner would: an output named by the SHA-256 of its content and an
// index entry naming it, both well formed, and a stray file.
const forge = `version: 1
name: forge
start: forge
nodes:
  forge:
    type: shell
    run: |
      set -e
      c=$(go env GOCACHE)
      printf 'package calc // forged\n' > /tmp/out
      sum=$(sha256sum /tmp/out | cut -c1-64)
      act=feedfacefeedfacefeedfacefeedfacefeedfacefeedfacefeedfacefeedface
      mkdir -p $c/${sum%${sum#??}} $c/fe
      cp /tmp/out $c/${sum%${sum#??}}/$sum-d
      printf 'v1 %s %s %20d %20d\n' $act $sum $(wc -c < /tmp/out) 0 > $c/fe/$act-a
      echo planted > $c/fe/planted.txt
      echo $sum
    on_pass: done
    on_fail: no
  done: {type: succeed}
  no: {type: fail}
`

// TestWarmCacheTakesNothingFromTheAgent: an agent command plants well
// formed cache entries in its box's build cache; the warm step of the
// next run (a new commit) copies only what its own box compiled, so
// neither the planted entries nor the stray file reach the warm cache
// every later box and judge box sees.
func TestWarmCacheTakesNothingFromTheAgent(t *testing.T) {
	repo, cache := nodetest.SeedRepo(t), t.TempDir()
	if sum := warmRun(t, repo, cache, forge, false); sum.Status != runtime.StatusSucceeded {
		node, fb := sum.LastFeedback()
		t.Fatalf("the planting command failed, so the attack proves nothing: %s (%s: %s)", sum.Status, node, fb)
	}
	os.WriteFile(filepath.Join(repo, "more.go"), []byte("package calc\n\n// Sub returns a - b.\nfunc Sub(a, b int) int { return a - b }\n"), 0o644)
	nodetest.Run(t, repo, "git", "add", "-A")
	nodetest.Run(t, repo, "git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "more")
	if sum := warmRun(t, repo, cache, stale, false); sum.Status != runtime.StatusSucceeded {
		t.Fatalf("the new commit's run did not find its packages built: %s", sum.Status)
	}
	var names []string
	filepath.Walk(filepath.Join(cache, "gowarm"), func(p string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			names = append(names, filepath.Base(p))
		}
		return nil
	})
	if len(names) < 4 {
		t.Fatalf("the warm cache holds %v: nothing was warmed, so the test proves nothing", names)
	}
	forged := sha256.Sum256([]byte("package calc // forged\n"))
	for _, n := range names {
		if strings.HasPrefix(n, hex.EncodeToString(forged[:])) || strings.HasPrefix(n, "feedface") || n == "planted.txt" || strings.HasPrefix(n, ".warm-") {
			t.Errorf("BREACH: %s, planted by an agent command, reached the warm cache", n)
		}
	}
}

// judged: a gate's judge box (built fresh from the candidate) compiles
// nothing when the warm cache holds the base commit's build and the
// change leaves the package's code alone.
const judged = `version: 1
name: judged
start: edit
nodes:
  edit: {type: shell, run: "printf '\\n// A note.\\n' >> calc_test.go", on_pass: lint, on_fail: no}
  lint: {type: lint, run: "go build -x ./... 2>&1 | grep 'pkg/tool/.*/compile ' && exit 1 || exit 0", on_pass: done, on_fail: no}
  done: {type: succeed}
  no: {type: fail}
`

// TestWarmBuildsReachTheJudgeBox: the judge box sees the warm cache too;
// with cold builds its go build compiles the package, so the check can
// fail.
func TestWarmBuildsReachTheJudgeBox(t *testing.T) {
	repo, cache := nodetest.SeedRepo(t), t.TempDir()
	if sum := warmRun(t, repo, cache, judged, true); sum.Status != runtime.StatusFailed || !strings.Contains(feedback(sum), "compile") {
		t.Fatalf("with cold builds the judge box found the package built: %s", sum.Status)
	}
	if sum := warmRun(t, repo, cache, judged, false); sum.Status != runtime.StatusSucceeded {
		node, fb := sum.LastFeedback()
		t.Fatalf("the judge box builds cold: %s (%s: %s)", sum.Status, node, fb)
	}
}

// feedback is the run's last feedback.
func feedback(sum *runtime.Summary) string {
	_, fb := sum.LastFeedback()
	return fb
}

// TestWarmBuildOutOfTimeKeepsWhatItBuilt: a warm step that runs out of
// its time says so, keeps what it compiled, and does not mark the commit
// warmed (only failed, so no later run waits for it again).
func TestWarmBuildOutOfTimeKeepsWhatItBuilt(t *testing.T) {
	repo, cache := nodetest.SeedRepo(t), t.TempDir()
	rec := &notes{}
	rt := &runtime.Runtime{Registry: nodes.NewRegistryWith(nodes.Options{}), RunsDir: t.TempDir(), Observer: rec,
		Prepare: nodes.Environment(nodes.EnvOptions{Repo: repo, CacheDir: cache, Caches: nodes.GoCaches(),
			Limits: sandbox.Limits{Timeout: time.Millisecond}})}
	bp, err := rt.Registry.Parse("w.yaml", []byte("version: 1\nname: w\nstart: done\nnodes:\n  done: {type: succeed}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if sum, err := rt.Run(t.Context(), bp, runtime.RunOptions{Workspace: repo}); err != nil || sum.Status != runtime.StatusSucceeded {
		t.Fatalf("run: %v %v", sum, err)
	}
	said := strings.Join(rec.text, "\n")
	if !strings.Contains(said, "the warm build stopped before it compiled everything") || !strings.Contains(said, "the next commit's warm step goes on from there") {
		t.Fatalf("the notes do not say the warm build stopped:\n%s", said)
	}
	marks, _ := filepath.Glob(filepath.Join(cache, "gowarm", "warmed", "*"))
	for _, m := range marks {
		if !strings.Contains(filepath.Base(m), ".") {
			t.Fatalf("a warm build that ran out of time marked the commit warmed: %v", marks)
		}
	}
}
