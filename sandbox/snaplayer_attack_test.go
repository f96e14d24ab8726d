//go:build linux

package sandbox_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sandgate/sandgate/sandbox"
)

// TestKilledPublishPinsNothing: a harness killed while it published a
// layer (its meta written, its directory not yet renamed into place)
// leaves a meta naming the layer's bases and store. No snapshot is
// there, so it must pin neither: eviction still empties the cache.
func TestKilledPublishPinsNothing(t *testing.T) {
	repo := layerRepo(t)
	cache := cacheDir(t)
	ctx := context.Background()
	first := git(t, repo, "rev-parse", "HEAD")
	if _, _, err := sandbox.Snapshot(ctx, repo, first, cache); err != nil {
		t.Fatal(err)
	}
	run(t, repo, layerSteps[0])
	second := commitAll(t, repo, "step")
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
