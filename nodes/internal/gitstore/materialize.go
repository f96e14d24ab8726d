package gitstore

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"sort"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// A gate judges a tree, not a workspace: the box it runs in is the base
// snapshot with the difference between the base tree and the judged tree
// laid over it, written here from the repository's objects alone. What
// the agent's box holds besides (ignored files, caches, scratch files) is
// not read, and the bytes judged are the bytes of the tree's blobs, so a
// verdict is a function of the tree it records.
//
// Only the subtrees whose hashes differ are read, so the cost follows the
// change, not the repository. Every write goes through an os.Root: a link
// the tree holds is written as a link, never followed.

// WriteLayer writes tree's difference from the base tree into dir, an
// empty directory, in the format of an overlay's upper layer over a
// checkout of the base: changed files and links as they are in tree,
// directories tree added, a path tree deletes as a whiteout (a character
// device 0/0), and a directory that replaces a file marked opaque.
func (p *Repo) WriteLayer(tree plumbing.Hash, dir string) error {
	return p.materialize(tree, dir, true)
}

// ApplyTree makes dir, a copy of the base tree's checkout, hold tree:
// it writes what differs and removes what tree deletes.
func (p *Repo) ApplyTree(tree plumbing.Hash, dir string) error {
	return p.materialize(tree, dir, false)
}

func (p *Repo) materialize(tree plumbing.Hash, dir string, layer bool) error {
	r, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer r.Close()
	m := &materializer{p: p, root: r, layer: layer}
	if err := m.dir("", p.baseTree, tree); err != nil {
		return fmt.Errorf("lay out tree %s: %w", tree, err)
	}
	return nil
}

type materializer struct {
	p     *Repo
	root  *os.Root
	layer bool
}

// entries reads a tree's entries by name; the zero hash is an empty tree.
func (m *materializer) entries(h plumbing.Hash) (map[string]object.TreeEntry, error) {
	out := map[string]object.TreeEntry{}
	if h.IsZero() {
		return out, nil
	}
	t, err := m.p.objs.tree(h)
	if err != nil {
		return nil, err
	}
	for _, e := range t.Entries {
		if !validName(e.Name) {
			return nil, fmt.Errorf("tree %s holds an entry named %q", h, e.Name)
		}
		out[e.Name] = e
	}
	return out, nil
}

// validName refuses names no checkout may write: they could step out of
// the directory or into the repository's own metadata.
func validName(name string) bool {
	return name != "" && name != "." && name != ".." && name != ".git" && path.Base(name) == name
}

// dir writes the difference between the base subtree and the judged
// subtree at rel (a slash path, "" for the root).
func (m *materializer) dir(rel string, base, want plumbing.Hash) error {
	before, err := m.entries(base)
	if err != nil {
		return err
	}
	after, err := m.entries(want)
	if err != nil {
		return err
	}
	names := make([]string, 0, len(before)+len(after))
	for n := range before {
		names = append(names, n)
	}
	for n := range after {
		if _, ok := before[n]; !ok {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	for _, name := range names {
		b, inBase := before[name]
		a, inTree := after[name]
		if inBase && inTree && a.Hash == b.Hash && a.Mode == b.Mode {
			continue
		}
		if err := m.entry(path.Join(rel, name), b, inBase, a, inTree); err != nil {
			return err
		}
	}
	return nil
}

// entry writes one differing path.
func (m *materializer) entry(rel string, b object.TreeEntry, inBase bool, a object.TreeEntry, inTree bool) error {
	baseDir := inBase && b.Mode == filemode.Dir
	switch {
	case !inTree:
		return m.remove(rel)
	case a.Mode == filemode.Dir && baseDir:
		if err := m.mkdir(rel); err != nil {
			return err
		}
		return m.dir(rel, b.Hash, a.Hash)
	case a.Mode == filemode.Dir:
		if inBase {
			if err := m.replace(rel); err != nil {
				return err
			}
		}
		if err := m.mkdir(rel); err != nil {
			return err
		}
		if inBase && m.layer {
			if err := markOpaque(m.root, rel); err != nil {
				return fmt.Errorf("%s: %w", rel, err)
			}
		}
		return m.dir(rel, plumbing.ZeroHash, a.Hash)
	}
	if inBase {
		if err := m.replace(rel); err != nil {
			return err
		}
	}
	return m.file(rel, a)
}

// remove deletes a base path: a whiteout in a layer, gone in a copy.
func (m *materializer) remove(rel string) error {
	if !m.layer {
		return m.root.RemoveAll(rel)
	}
	if err := m.parent(rel); err != nil {
		return err
	}
	if err := whiteout(m.root, rel); err != nil {
		return fmt.Errorf("%s: %w", rel, err)
	}
	return nil
}

// replace clears a base path that the judged tree holds something else
// at. In a layer the new entry hides it by itself.
func (m *materializer) replace(rel string) error {
	if m.layer {
		return nil
	}
	return m.root.RemoveAll(rel)
}

func (m *materializer) parent(rel string) error {
	if d := path.Dir(rel); d != "." {
		return m.root.MkdirAll(d, 0o755)
	}
	return nil
}

func (m *materializer) mkdir(rel string) error {
	if err := m.root.MkdirAll(rel, 0o755); err != nil {
		return err
	}
	st, err := m.root.Lstat(rel)
	if err == nil && !st.IsDir() {
		err = fmt.Errorf("%s is a %s, not a directory", rel, st.Mode().Type())
	}
	return err
}

// file writes a blob, link or submodule entry.
func (m *materializer) file(rel string, e object.TreeEntry) error {
	if err := m.parent(rel); err != nil {
		return err
	}
	switch e.Mode {
	case filemode.Submodule:
		// A checkout that does not recurse leaves an empty directory.
		return m.mkdir(rel)
	case filemode.Symlink:
		target, err := m.blobBytes(e.Hash, 4096)
		if err != nil {
			return fmt.Errorf("%s: %w", rel, err)
		}
		return m.root.Symlink(string(target), rel)
	case filemode.Regular, filemode.Deprecated, filemode.Executable:
	default:
		return fmt.Errorf("%s: unknown tree entry mode %o", rel, e.Mode)
	}
	mode := fs.FileMode(0o644)
	if e.Mode == filemode.Executable {
		mode = 0o755
	}
	f, err := m.root.OpenFile(rel, os.O_CREATE|os.O_EXCL|os.O_WRONLY, mode)
	if err != nil {
		return err
	}
	r, err := m.p.objs.blobOpener(e.Hash)()
	if err != nil {
		f.Close()
		return err
	}
	_, err = io.Copy(f, r)
	err = errors.Join(err, r.Close(), f.Close())
	if err == nil {
		// The mode asked for is cut by the umask; a checkout's is not.
		err = m.root.Chmod(rel, mode)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", rel, err)
	}
	return nil
}

// blobBytes reads a small blob (a link's target) whole.
func (m *materializer) blobBytes(h plumbing.Hash, max int64) ([]byte, error) {
	r, err := m.p.objs.blobOpener(h)()
	if err != nil {
		return nil, err
	}
	b, err := io.ReadAll(io.LimitReader(r, max+1))
	err = errors.Join(err, r.Close())
	if err == nil && int64(len(b)) > max {
		err = fmt.Errorf("link target longer than %d bytes", max)
	}
	return b, err
}
