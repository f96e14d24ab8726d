//go:build linux

package sandbox_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sandgate/sandgate/sandbox"
)

// layerSteps are commits that exercise what a layer must carry: changed,
// added and deleted files, deleted directories, a file replaced by a
// directory and back, a directory replaced by a file and by a symlink,
// symlinks retargeted and replaced by files, mode changes.
var layerSteps = []string{
	`echo changed > a.txt; echo new > new.txt; rm -r gone; rm f2d; mkdir f2d; echo in > f2d/inner.txt
	 rm -r d2f; echo now a file > d2f; ln -sf new.txt link; chmod +x script.sh`,
	`ln -s dir1 link2; rm -r dir1/sub; mkdir gone; echo again > gone/again.txt; chmod -x script.sh
	 rm link; echo was a link > link`,
	`rm -r dir1; ln -s /etc dir1; rm -r f2d; echo a file again > f2d; rm keep/k07.txt`,
	`rm dir1; mkdir -p dir1/sub; echo back > dir1/sub/y.txt; mv new.txt renamed.txt`,
}

// layerRepo is a repository whose first commit has the paths layerSteps
// change, and forty files they never touch.
func layerRepo(t *testing.T) string {
	t.Helper()
	repo := t.TempDir()
	git(t, repo, "init", "-q", "-b", "main")
	run(t, repo, `mkdir -p keep dir1/sub gone d2f
	 for i in $(seq -w 1 40); do echo keep $i > keep/k$i.txt; done
	 echo a > a.txt; echo x > dir1/x.txt; echo y > dir1/sub/y.txt; echo f > f2d; echo z > d2f/z.txt
	 echo g > gone/g.txt; ln -s a.txt link; printf '#!/bin/sh\n' > script.sh`)
	commitAll(t, repo, "base")
	return repo
}

func run(t *testing.T, dir, script string) string {
	t.Helper()
	cmd := exec.Command("sh", "-c", script)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", script, err, out)
	}
	return string(out)
}

// manifestScript lists a tree the way git ls-tree -r does (mode, blob id,
// path), then its directories: what a box and the harness's view see.
const manifestScript = `for f in $(find . -path ./.git -prune -o \( -type f -o -type l \) -print | sort); do
  p=${f#./}
  if [ -L "$f" ]; then printf '120000 %s\t%s\n' "$(printf %s "$(readlink "$f")" | git hash-object --stdin)" "$p"
  elif [ -x "$f" ]; then printf '100755 %s\t%s\n' "$(git hash-object "$f")" "$p"
  else printf '100644 %s\t%s\n' "$(git hash-object "$f")" "$p"; fi
done
find . -path ./.git -prune -o -type d -print | sort`

// wantManifest is manifestScript's output for commit's tree.
func wantManifest(t *testing.T, repo, commit string) string {
	t.Helper()
	var b strings.Builder
	dirs := map[string]bool{".": true}
	for _, l := range strings.Split(git(t, repo, "ls-tree", "-r", "--full-tree", commit), "\n") {
		f := strings.Fields(l)
		fmt.Fprintf(&b, "%s %s\t%s\n", f[0], f[2], f[3])
		for d := filepath.Dir(f[3]); d != "."; d = filepath.Dir(d) {
			dirs["./"+d] = true
		}
	}
	var list []string
	for d := range dirs {
		list = append(list, d)
	}
	return b.String() + strings.Join(sortedStrings(list), "\n") + "\n"
}

func sortedStrings(s []string) []string {
	out := append([]string(nil), s...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if strings.Compare(out[j], out[i]) < 0 {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

var sumScan = regexp.MustCompile(`refresh/sum_scan:(\d+)`)

// TestLayeredSnapshotChain: each commit's snapshot is a layer over the
// previous one's; the harness's view and a box see exactly the commit's
// tree, git status in the box is clean without rehashing the tree, and
// what the box changes lands in its own upper layer, never in a layer.
func TestLayeredSnapshotChain(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("layered snapshots need root to mount the harness's view of them; without it every snapshot is whole")
	}
	repo := layerRepo(t)
	cache := cacheDir(t)
	ctx := context.Background()
	commits := []string{git(t, repo, "rev-parse", "HEAD")}
	var leases []*sandbox.SnapshotLease
	defer func() {
		for _, l := range leases {
			l.Release()
		}
	}()
	for i := 0; i <= len(layerSteps); i++ {
		if i > 0 {
			run(t, repo, layerSteps[i-1])
			commits = append(commits, commitAll(t, repo, fmt.Sprintf("step %d", i)))
		}
		l, err := sandbox.LeaseSnapshot(ctx, repo, commits[i], cache)
		if err != nil {
			t.Fatal(err)
		}
		leases = append(leases, l)
		layered := strings.Contains(l.Dir, "/views/")
		if layered != (i > 0) {
			t.Fatalf("snapshot %d: layered %v (%s)", i, layered, l.Dir)
		}
		want := wantManifest(t, repo, commits[i])
		if got := run(t, l.Dir, manifestScript); got != want {
			t.Fatalf("snapshot %d, the harness's view:\n got %s\nwant %s", i, got, want)
		}
		if i > 0 {
			checkLayeredBox(t, l.Dir, cache, want)
		}
	}
}

// checkLayeredBox starts a box on the layered snapshot view and checks
// what it sees, then attacks the layers from inside it.
func checkLayeredBox(t *testing.T, view, cache, want string) {
	t.Helper()
	layers := map[string]string{}
	entries, _ := os.ReadDir(filepath.Join(cache, "snapshots"))
	for _, e := range entries {
		if e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
			p := filepath.Join(cache, "snapshots", e.Name())
			layers[p] = treeHash(t, p)
		}
	}
	b, err := sandbox.Start(context.Background(), sandbox.Options{Snapshot: view, StateDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	res := sh(t, b, manifestScript)
	if res.ExitCode != 0 || string(res.Output) != want {
		t.Fatalf("the box sees (exit %d):\n%s\nwant\n%s", res.ExitCode, res.Output, want)
	}
	res = sh(t, b, `git status --porcelain && GIT_TRACE2_PERF=/proc/self/fd/1 git status --porcelain | grep -o 'refresh/sum_scan:[0-9]*'`)
	m := sumScan.FindStringSubmatch(string(res.Output))
	if res.ExitCode != 0 || m == nil || !strings.HasPrefix(string(res.Output), "refresh/") {
		t.Fatalf("git status in the box (exit %d): %q", res.ExitCode, res.Output)
	}
	if n, _ := strconv.Atoi(m[1]); n > 10 {
		t.Errorf("git status in the box rehashed %d files", n)
	}
	res = sh(t, b, `echo owned > keep/k01.txt; rm -f keep/k02.txt a.txt; rm -rf keep/; chmod 777 . 2>/dev/null
	 ln -sf /etc/passwd script.sh; echo x >> .git/index 2>/dev/null; mkdir -p x && touch x/y; true`)
	if res.ExitCode != 0 {
		t.Fatalf("attack: exit %d: %s", res.ExitCode, res.Output)
	}
	for p, h := range layers {
		if treeHash(t, p) != h {
			t.Errorf("BREACH: the box changed the layer %s", p)
		}
	}
}

// TestLayerBaseOutlivesItsLayers: the snapshot a cached layer stacks on
// is not evicted while the layer is leased or cached; once the layer is
// gone, pruning takes it; eviction passes again until it can.
func TestLayerBaseOutlivesItsLayers(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("layered snapshots need root to mount the harness's view of them; without it every snapshot is whole")
	}
	repo, cache, first, second := baseAndStep(t)
	ctx := context.Background()
	top, err := sandbox.LeaseSnapshot(ctx, repo, second, cache)
	if err != nil {
		t.Fatal(err)
	}
	want := wantManifest(t, repo, second)
	if _, err := sandbox.EvictSnapshots(cache, 0); err != nil {
		t.Fatal(err)
	}
	if got := run(t, top.Dir, manifestScript); got != want {
		t.Fatalf("the leased layer after eviction:\n%s", got)
	}
	top.Release()
	list, _ := sandbox.ListSnapshots(cache)
	for _, s := range list {
		if s.Commit != first {
			continue
		}
		if ok, err := sandbox.RemoveSnapshot(s); ok || err != nil {
			t.Fatalf("the base of a cached layer was removed (%v)", err)
		}
	}
	// sandgate prune removes stale snapshots in StaleSnapshots' order:
	// the layer first, then its base.
	stale, _, err := sandbox.StaleSnapshots(cache, time.Now().Add(time.Hour))
	if err != nil || len(stale) != 2 {
		t.Fatalf("stale %+v, %v", stale, err)
	}
	for _, s := range stale {
		if ok, err := sandbox.RemoveSnapshot(s); !ok || err != nil {
			t.Fatalf("prune kept %s (%v)", s.Commit, err)
		}
	}
	list, _ = sandbox.ListSnapshots(cache)
	if n, _ := sandbox.CacheBytes(cache); len(list) != 0 || n != 0 {
		t.Fatalf("left %+v (%d bytes)", list, n)
	}
	if views, _ := os.ReadDir(filepath.Join(cache, "views")); len(views) > 1 {
		t.Fatalf("views left: %v", views)
	}
}

// TestViewDroppedWhileAForkHoldsTheLease: a child forked while a lease is
// open holds its lock until it execs or exits; a Release meanwhile must
// still unmount the view (CI saw a clean checkout's view left mounted
// when the pool's next spare init was forked as the run ended).
func TestViewDroppedWhileAForkHoldsTheLease(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("layered snapshots need root to mount the harness's view of them; without it every snapshot is whole")
	}
	repo, cache, _, second := baseAndStep(t)
	top, err := sandbox.LeaseSnapshot(context.Background(), repo, second, cache)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(top.Dir, "/views/") {
		t.Fatalf("setup: the snapshot is not layered: %s", top.Dir)
	}
	child := exec.Command("sleep", "60")
	child.ExtraFiles = []*os.File{sandbox.LeaseLock(top)}
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	released := make(chan error, 1)
	go func() { released <- top.Release() }()
	time.Sleep(5 * time.Millisecond) // the child lets go while Release tries
	child.Process.Kill()
	child.Wait()
	if err := <-released; err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(top.Dir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the view outlived its last lease (%v)", err)
	}
}

// baseAndStep is layerRepo with a cached snapshot of its first commit
// and a second commit (layerSteps[0]) not yet snapshotted.
func baseAndStep(t *testing.T) (repo, cache, first, second string) {
	t.Helper()
	repo, cache = layerRepo(t), cacheDir(t)
	first = git(t, repo, "rev-parse", "HEAD")
	if _, _, err := sandbox.Snapshot(context.Background(), repo, first, cache); err != nil {
		t.Fatal(err)
	}
	run(t, repo, layerSteps[0])
	return repo, cache, first, commitAll(t, repo, "step")
}

// TestLayerDepthIsBounded: past MaxLayers a snapshot is built flat, and
// the next ones stack on it; every one sees its commit's tree.
func TestLayerDepthIsBounded(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("layered snapshots need root to mount the harness's view of them; without it every snapshot is whole")
	}
	repo := layerRepo(t)
	cache := cacheDir(t)
	ctx := context.Background()
	flat := 0
	for i := 1; i <= sandbox.MaxLayers+2; i++ {
		run(t, repo, fmt.Sprintf("echo %d > keep/k%02d.txt; rm -f keep/k%02d.txt", i, i%40+1, (i+20)%40+1))
		c := commitAll(t, repo, fmt.Sprintf("step %d", i))
		l, err := sandbox.LeaseSnapshot(ctx, repo, c, cache)
		if err != nil {
			t.Fatal(err)
		}
		// The first is flat (no base); the one whose base has
		// MaxLayers layers is flat again.
		if !strings.Contains(l.Dir, "/views/") && i > 1 {
			flat++
			if i != sandbox.MaxLayers+1 {
				t.Errorf("snapshot %d is flat", i)
			}
		}
		if got, want := run(t, l.Dir, manifestScript), wantManifest(t, repo, c); got != want {
			t.Fatalf("snapshot %d:\n got %s\nwant %s", i, got, want)
		}
		l.Release()
	}
	if flat != 1 {
		t.Fatalf("%d flat snapshots past the first, want 1", flat)
	}
	// Least recently used first is bases first: eviction passes again
	// until the chains are gone.
	if _, err := sandbox.EvictSnapshots(cache, 0); err != nil {
		t.Fatal(err)
	}
	if list, _ := sandbox.ListSnapshots(cache); len(list) != 0 {
		t.Fatalf("eviction left %d snapshots", len(list))
	}
}

// TestLayerWithItsBaseGone: a cache shared with a sandgate from before
// layers may lose a layer's base to its eviction; the layer is then
// built again rather than shown without the files of its base.
func TestLayerWithItsBaseGone(t *testing.T) {
	repo := layerRepo(t)
	cache := cacheDir(t)
	ctx := context.Background()
	first := git(t, repo, "rev-parse", "HEAD")
	if _, _, err := sandbox.Snapshot(ctx, repo, first, cache); err != nil {
		t.Fatal(err)
	}
	run(t, repo, layerSteps[0])
	second := commitAll(t, repo, "step")
	if err := sandbox.UnmountViews(cache); err != nil {
		t.Fatal(err)
	}
	if _, _, err := sandbox.Snapshot(ctx, repo, second, cache); err != nil {
		t.Fatal(err)
	}
	if err := sandbox.UnmountViews(cache); err != nil {
		t.Fatal(err)
	}
	// What an older sandgate's eviction does: it knows nothing of layers.
	for _, p := range []string{first, first + ".json", first + ".lock"} {
		if err := os.RemoveAll(filepath.Join(cache, "snapshots", p)); err != nil {
			t.Fatal(err)
		}
	}
	l, err := sandbox.LeaseSnapshot(ctx, repo, second, cache)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	if got, want := run(t, l.Dir, manifestScript), wantManifest(t, repo, second); got != want {
		t.Fatalf("the rebuilt snapshot:\n got %s\nwant %s", got, want)
	}
}
