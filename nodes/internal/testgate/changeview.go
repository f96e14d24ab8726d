package testgate

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"sort"

	"github.com/sandgate/sandgate/nodes/internal/gate"
	"github.com/sandgate/sandgate/sandbox"
)

// maxScanBytes caps one Go file the harness parses for its own checks; a
// bigger changed file is a problem, never skipped.
const maxScanBytes = 16 << 20

// changeView is the repository as the harness sees it after the change:
// the base snapshot, the change read through sandbox.Change.Open (never
// through the box), and, for a held-out run, the held-out tests. Nothing
// here trusts what a command in the box printed.
type changeView struct {
	snap    string
	changes map[string]sandbox.Change
	// extra maps a slash path to a host file laid over the view (held-out
	// tests, which win over the change as placeHidden makes them win).
	extra map[string]string
}

func newChangeView(snap string, changes []sandbox.Change, hiddenDir string) (*changeView, error) {
	v := &changeView{snap: snap, changes: map[string]sandbox.Change{}, extra: map[string]string{}}
	for _, c := range changes {
		v.changes[c.Path] = c
	}
	if hiddenDir == "" {
		return v, nil
	}
	files, err := gate.HiddenFiles(hiddenDir)
	if err != nil {
		return nil, fmt.Errorf("hidden tests: %w", err)
	}
	for _, f := range files {
		v.extra[f] = filepath.Join(hiddenDir, filepath.FromSlash(f))
	}
	return v, nil
}

// errNotFile is a path that is absent, a directory or a link in the view.
var errNotFile = errors.New("not a regular file")

// read returns a regular file's content; links are not followed.
func (v *changeView) read(rel string) ([]byte, error) {
	if host, ok := v.extra[rel]; ok {
		return readCapped(host)
	}
	if c, ok := v.changes[rel]; ok {
		if c.Deleted || c.Mode&os.ModeSymlink != 0 {
			return nil, errNotFile
		}
		if c.Size > maxScanBytes {
			return nil, fmt.Errorf("%s: %d bytes, more than the %d MiB the harness parses", rel, c.Size, maxScanBytes>>20)
		}
		r, err := c.Open()
		if err != nil {
			return nil, err
		}
		defer r.Close()
		return io.ReadAll(r)
	}
	p := filepath.Join(v.snap, filepath.FromSlash(rel))
	if fi, err := os.Lstat(p); err != nil || !fi.Mode().IsRegular() {
		return nil, errNotFile
	}
	return readCapped(p)
}

func readCapped(p string) ([]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxScanBytes+1))
	if err == nil && len(b) > maxScanBytes {
		err = fmt.Errorf("%s: more than the %d MiB the harness parses", p, maxScanBytes>>20)
	}
	return b, err
}

// files lists the names of the regular files directly in dir (a slash
// path, "." for the root).
func (v *changeView) files(dir string) []string {
	set := map[string]bool{}
	if ents, err := os.ReadDir(filepath.Join(v.snap, filepath.FromSlash(dir))); err == nil {
		for _, e := range ents {
			if e.Type().IsRegular() {
				set[e.Name()] = true
			}
		}
	}
	for p, c := range v.changes {
		if path.Dir(p) != dir {
			continue
		}
		set[path.Base(p)] = !c.Deleted && c.Mode&os.ModeSymlink == 0
	}
	for p := range v.extra {
		if path.Dir(p) == dir {
			set[path.Base(p)] = true
		}
	}
	var out []string
	for n, ok := range set {
		if ok {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

// inBase reports whether the base snapshot has an entry at rel.
func (v *changeView) inBase(rel string) bool {
	_, err := os.Lstat(filepath.Join(v.snap, filepath.FromSlash(rel)))
	return err == nil
}
