package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// A snapshot built on a base is a layer: only what the new commit
// changed (files written, whiteouts for what it deleted, opaque
// directories where a directory was replaced) and its own .git, stacked
// over the base's layers. A box mounts the whole chain as its overlay's
// lower layers (snapshotLayers), so building one costs the change, not
// the tree; the harness reads the snapshot's files through a read-only
// overlay of the chain (its view, cacheDir/views/<commit>). A layer is
// never written once built and is only ever mounted as a lower layer.

// maxLayers bounds a snapshot's layers, its own included: a snapshot
// whose base has maxLayers-1 or more is built flat (linked from the
// flat snapshot at the bottom of the base's chain) instead. A box's
// overlay options, which name every layer, must fit in a page.
const maxLayers = 12

// errLayerGone: a snapshot a layered one stacks on was removed (by a
// sandgate from before layers, which did not know to keep it).
var errLayerGone = errors.New("removed from the cache")

// holdLowers leases the snapshots a layered snapshot stacks on (from its
// meta; none for a flat one), so none is evicted while it is leased, and
// records their directories.
func (l *SnapshotLease) holdLowers(root string) error {
	if l.layers != nil {
		return nil
	}
	m, err := readSnapshotMeta(root, l.Commit)
	l.layers = []string{filepath.Join(root, l.Commit)}
	if err != nil || len(m.Lower) == 0 {
		return nil
	}
	for _, c := range m.Lower {
		if !commitName.MatchString(c) {
			return fmt.Errorf("snapshot %s: bad layer %q in its meta", l.Commit, c)
		}
		ll, err := lease(root, c)
		if err != nil {
			return err
		}
		l.lower = append(l.lower, ll)
		if _, err := os.Stat(ll.Dir); err != nil {
			return fmt.Errorf("snapshot %s: its layer %s is gone (%w): %w", l.Commit, c, errLayerGone, err)
		}
		l.layers = append(l.layers, ll.Dir)
	}
	return nil
}

// attach holds a leased snapshot's lower layers and, for a layered
// snapshot, points Dir at its view (mounted on first use).
func (l *SnapshotLease) attach(root string) error {
	if err := l.holdLowers(root); err != nil {
		return err
	}
	if len(l.layers) < 2 {
		return nil
	}
	view := viewDir(root, l.Commit)
	if err := ensureView(view, l.layers); err != nil {
		return err
	}
	l.Dir, l.view = view, view
	return nil
}

// viewDir is where a layered snapshot's merged read-only view is
// mounted: cacheDir/views/<commit>.
func viewDir(root, commit string) string {
	return filepath.Join(filepath.Dir(root), "views", commit)
}

// snapshotCommit returns the commit of dir when it is a snapshot of the
// cache root (root/<commit>, or its view), else "".
func snapshotCommit(root, dir string) string {
	c := filepath.Base(dir)
	if !commitName.MatchString(c) {
		return ""
	}
	if d := filepath.Clean(dir); d != filepath.Join(root, c) && d != viewDir(root, c) {
		return ""
	}
	return c
}

// snapshotLayers returns the layers a box stacks for the snapshot dir,
// topmost first, when dir is a layered snapshot's view; else nil (the
// directory itself is the lower layer).
func snapshotLayers(dir string) []string {
	views := filepath.Dir(filepath.Clean(dir))
	if filepath.Base(views) != "views" {
		return nil
	}
	root := filepath.Join(filepath.Dir(views), "snapshots")
	c := snapshotCommit(root, dir)
	if c == "" {
		return nil
	}
	m, err := readSnapshotMeta(root, c)
	if err != nil || len(m.Lower) == 0 {
		return nil
	}
	layers := []string{filepath.Join(root, c)}
	for _, l := range m.Lower {
		layers = append(layers, filepath.Join(root, l))
	}
	return layers
}

// layerAbove returns a cached snapshot that stacks on the snapshot of
// commit (which must then stay), or "".
func layerAbove(root, commit string) string {
	entries, _ := os.ReadDir(root)
	for _, e := range entries {
		c, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok || c == commit || !commitName.MatchString(c) || !published(root, c) {
			continue
		}
		m, err := readSnapshotMeta(root, c)
		if err != nil {
			continue
		}
		for _, l := range m.Lower {
			if l == commit {
				return c
			}
		}
	}
	return ""
}

// published reports whether the snapshot of commit, whose meta is
// there, is there too. A build writes the meta before it renames the
// snapshot into place (holding leases on the bases and the store it
// names meanwhile), and eviction renames a snapshot away before it
// removes the meta: a harness killed between the two leaves a meta of
// no snapshot, which must pin neither bases nor store.
func published(root, commit string) bool {
	_, err := os.Lstat(filepath.Join(root, commit))
	return err == nil
}

// checkLayerPaths refuses to stack a new layer of the cache root over
// layers when an overlay's options could not name them all: a path
// with a comma, colon or backslash, or more than half a page of paths
// (a box's overlay adds its upper and work directories, a page is the
// limit).
func checkLayerPaths(root string, layers []string) error {
	n := len(root) + 60
	for _, p := range append([]string{root}, layers...) {
		if strings.ContainsAny(p, ",:\\") {
			return errors.New("snapshot layers: the path " + p + " holds a comma, colon or backslash")
		}
		n += len(p) + 1
	}
	if n > os.Getpagesize()/2 {
		return fmt.Errorf("snapshot layers: %d bytes of paths, more than an overlay's options hold", n)
	}
	return nil
}

// UnmountViews unmounts the views of the cache's layered snapshots that
// no live run leases (sandbox.Snapshot leaves its view mounted; a
// lease's Release unmounts it when it was the last). The snapshots
// stay; a lease mounts a view again.
func UnmountViews(cacheDir string) error {
	views := filepath.Join(cacheDir, "views")
	entries, err := os.ReadDir(views)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		return err
	}
	var errs []error
	for _, e := range entries {
		if commitName.MatchString(e.Name()) {
			lock := filepath.Join(cacheDir, "snapshots", e.Name()+".lock")
			errs = append(errs, dropView(lock, filepath.Join(views, e.Name())))
		}
	}
	return errors.Join(errs...)
}

// SnapshotOwnDir is the directory that holds the snapshot dir's own
// .git (HEAD, config, alternates, index): dir itself, or the top layer
// of a layered snapshot's view. A repository that borrows a snapshot's
// objects names it, not the view, which is unmounted when its last
// lease ends.
func SnapshotOwnDir(dir string) string {
	if layers := snapshotLayers(dir); len(layers) > 0 {
		return layers[0]
	}
	return dir
}
