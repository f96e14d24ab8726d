//go:build linux

package sandbox_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sandgate/sandgate/sandbox"
)

// hostileSteps are commits of a repository whose content is hostile to
// a layer: names an overlay or its options could misread (commas,
// colons, backslashes, newlines, aufs-style whiteout names, case twins),
// directories replaced by files and symlinks out of the tree and back,
// and .gitattributes changes that alter how files the commit does not
// touch check out (ident, eol).
var hostileSteps = []string{
	`printf 't.txt ident\ncrlf.txt text eol=crlf\n' > .gitattributes`,
	`rm -r d; ln -s /etc d; rm Case; rm x; mkdir x; echo y > x/y; rm -r many
	 printf 'changed\n' > "$(printf 'new\nline')"; echo opq > sub/.wh..wh..opq`,
	`rm d; mkdir d; echo pw > d/passwd; rm -r x; echo file again > x; rm .gitattributes
	 echo '$Id$ again' > t.txt; rm 'co,lon:back\slash'; mkdir 'co,lon:back\slash'; echo in > 'co,lon:back\slash/f'`,
	`printf '* text eol=crlf\n' > .gitattributes; rm -r sub; echo sub > sub`,
}

// hostileRepo is the repository hostileSteps change.
func hostileRepo(t *testing.T) string {
	t.Helper()
	repo := t.TempDir()
	git(t, repo, "init", "-q", "-b", "main")
	run(t, repo, `printf '$Id$\n' > t.txt; printf 'a\nb\n' > crlf.txt; mkdir -p d sub many
	 echo d > d/f; echo x > x; echo C > Case; echo c > case; echo w > .wh.x; echo s > sub/s
	 printf 'nl\n' > "$(printf 'new\nline')"; echo sep > 'co,lon:back\slash'; ln -s /etc out
	 for i in $(seq 1 300); do echo $i > many/$i; done`)
	commitAll(t, repo, "base")
	return repo
}

// rawManifestScript lists a tree as it is on disk, .git aside: every
// entry's type, mode and link target, then every file's bytes' hash (no
// git: a conversion .gitattributes asks for must show).
const rawManifestScript = `find . -mindepth 1 -path ./.git -prune -o -printf '%y %m %p -> %l\n' | LC_ALL=C sort
find . -path ./.git -prune -o -type f -print0 | LC_ALL=C sort -z | xargs -0 -r sha256sum`

// TestLayerIsTheCommitsCheckout: every snapshot of a chain of layers
// built from hostile content is, byte for byte, what a fresh checkout of
// its commit is (a flat snapshot in an empty cache), in the harness's
// view and in a box: what gates judge is the commit's checkout.
func TestLayerIsTheCommitsCheckout(t *testing.T) {
	repo := hostileRepo(t)
	cache := cacheDir(t)
	ctx := context.Background()
	commits := []string{git(t, repo, "rev-parse", "HEAD")}
	for i, step := range hostileSteps {
		run(t, repo, step)
		commits = append(commits, commitAll(t, repo, fmt.Sprintf("step %d", i+1)))
	}
	for i, c := range commits {
		l, err := sandbox.LeaseSnapshot(ctx, repo, c, cache)
		if err != nil {
			t.Fatal(err)
		}
		defer l.Release()
		f, err := sandbox.LeaseSnapshot(ctx, repo, c, cacheDir(t))
		if err != nil {
			t.Fatal(err)
		}
		want := run(t, f.Dir, rawManifestScript)
		f.Release()
		if got := run(t, l.Dir, rawManifestScript); got != want {
			t.Errorf("snapshot %d (%s), the harness's view:\n%s", i, l.Dir, diffLines(got, want))
			continue
		}
		b, err := sandbox.Start(ctx, sandbox.Options{Snapshot: l.Dir, StateDir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		res := sh(t, b, rawManifestScript)
		b.Close()
		if res.ExitCode != 0 || string(res.Output) != want {
			t.Errorf("snapshot %d, the box (exit %d):\n%s", i, res.ExitCode, diffLines(string(res.Output), want))
		}
	}
}

// diffLines lists the lines only got has (+) and only want has (-).
func diffLines(got, want string) string {
	in := func(s string) map[string]bool {
		m := map[string]bool{}
		for _, l := range strings.Split(s, "\n") {
			m[l] = true
		}
		return m
	}
	g, w := in(got), in(want)
	var b strings.Builder
	for _, l := range strings.Split(got, "\n") {
		if !w[l] {
			b.WriteString("+ " + l + "\n")
		}
	}
	for _, l := range strings.Split(want, "\n") {
		if !g[l] {
			b.WriteString("- " + l + "\n")
		}
	}
	return b.String()
}

// TestKilledPublishPinsNothing: a harness killed while it published a
// layer (its meta written, its directory not yet renamed into place)
// leaves a meta naming the layer's bases and store. No snapshot is
// there, so it must pin neither: eviction still empties the cache.
func TestKilledPublishPinsNothing(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("layered snapshots need root to mount the harness's view of them; without it every snapshot is whole")
	}
	repo, cache, _, second := baseAndStep(t)
	ctx := context.Background()
	if _, _, err := sandbox.Snapshot(ctx, repo, second, cache); err != nil {
		t.Fatal(err)
	}
	// What the killed build of a third commit on second left behind.
	root := filepath.Join(cache, "snapshots")
	meta, err := os.ReadFile(filepath.Join(root, second+".json"))
	if err != nil {
		t.Fatal(err)
	}
	third := strings.Repeat("e", 40)
	orphan := strings.Replace(string(meta), `"lower":["`, `"lower":["`+second+`","`, 1)
	if orphan == string(meta) {
		t.Fatalf("second is no layer: %s", meta)
	}
	if err := os.WriteFile(filepath.Join(root, third+".json"), []byte(orphan), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := sandbox.EvictSnapshots(cache, 0); err != nil {
		t.Fatal(err)
	}
	list, _ := sandbox.ListSnapshots(cache)
	n, _ := sandbox.CacheBytes(cache)
	if len(list) != 0 || n != 0 {
		t.Errorf("a killed build's meta pins %d snapshots and %d bytes of the cache: %+v", len(list), n, list)
	}
}
