package nodes

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/filesystem"

	"github.com/sandgate/sandgate/sandbox"
)

// promotion is the run's own bare repository, outside the box, where the
// verified change becomes a commit. It borrows the snapshot's objects
// through git alternates, so neither the user's repository nor the shared
// snapshot is ever written.
type promotion struct {
	repo *git.Repository
	base *object.Commit
	dir  string
	// check is the workspace's checkPromotable.
	check func([]sandbox.Change) error
}

func (w *Workspace) promotion() (*promotion, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.promo != nil {
		return w.promo, nil
	}
	dir := filepath.Join(w.RunDir, "promote.git")
	if _, err := os.Stat(dir); err != nil {
		if _, err := git.PlainInit(dir, true); err != nil {
			return nil, fmt.Errorf("create promotion repository: %w", err)
		}
		alt := filepath.Join(w.Snapshot, ".git", "objects") + "\n"
		if err := os.WriteFile(filepath.Join(dir, "objects", "info", "alternates"), []byte(alt), 0o644); err != nil {
			return nil, err
		}
	}
	st := filesystem.NewStorageWithOptions(osfs.New(dir), cache.NewObjectLRUDefault(), filesystem.Options{AlternatesFS: osfs.New("/")})
	repo, err := git.Open(st, nil)
	if err != nil {
		return nil, fmt.Errorf("open promotion repository: %w", err)
	}
	base, err := repo.CommitObject(plumbing.NewHash(w.Base))
	if err != nil {
		return nil, fmt.Errorf("base commit %s: %w", w.Base, err)
	}
	w.promo = &promotion{repo: repo, base: base, dir: dir, check: w.checkPromotable}
	return w.promo, nil
}

// commit builds a commit of changes on top of the base commit.
// It refuses a change that must not leave the run (see checkPromotable).
func (p *promotion) commit(changes []sandbox.Change, msg string, author object.Signature) (*object.Commit, error) {
	if err := p.check(changes); err != nil {
		return nil, err
	}
	baseTree, err := p.base.Tree()
	if err != nil {
		return nil, err
	}
	root := &dirChange{files: map[string]*sandbox.Change{}, dirs: map[string]*dirChange{}}
	for i := range changes {
		root.add(strings.Split(changes[i].Path, "/"), &changes[i])
	}
	treeHash, _, err := p.rebuild(baseTree, root)
	if err != nil {
		return nil, err
	}
	c := &object.Commit{Author: author, Committer: author, Message: msg, TreeHash: treeHash, ParentHashes: []plumbing.Hash{p.base.Hash}}
	obj := p.repo.Storer.NewEncodedObject()
	if err := c.Encode(obj); err != nil {
		return nil, err
	}
	h, err := p.repo.Storer.SetEncodedObject(obj)
	if err != nil {
		return nil, err
	}
	return p.repo.CommitObject(h)
}

// dirChange groups changes by directory.
type dirChange struct {
	files map[string]*sandbox.Change
	dirs  map[string]*dirChange
}

func (d *dirChange) add(parts []string, c *sandbox.Change) {
	if len(parts) == 1 {
		d.files[parts[0]] = c
		return
	}
	sub := d.dirs[parts[0]]
	if sub == nil {
		sub = &dirChange{files: map[string]*sandbox.Change{}, dirs: map[string]*dirChange{}}
		d.dirs[parts[0]] = sub
	}
	sub.add(parts[1:], c)
}

// rebuild writes a new tree for one directory; empty reports that nothing
// is left in it.
func (p *promotion) rebuild(tree *object.Tree, d *dirChange) (plumbing.Hash, bool, error) {
	entries := map[string]object.TreeEntry{}
	if tree != nil {
		for _, e := range tree.Entries {
			entries[e.Name] = e
		}
	}
	for name, c := range d.files {
		if c.Deleted {
			if e, ok := entries[name]; ok && e.Mode != filemode.Dir {
				delete(entries, name)
			}
			continue
		}
		h, mode, err := p.blob(c)
		if err != nil {
			return plumbing.ZeroHash, false, err
		}
		entries[name] = object.TreeEntry{Name: name, Mode: mode, Hash: h}
	}
	for name, sub := range d.dirs {
		var subTree *object.Tree
		if e, ok := entries[name]; ok && e.Mode == filemode.Dir {
			t, err := p.repo.TreeObject(e.Hash)
			if err != nil {
				return plumbing.ZeroHash, false, err
			}
			subTree = t
		}
		h, empty, err := p.rebuild(subTree, sub)
		if err != nil {
			return plumbing.ZeroHash, false, err
		}
		if empty {
			delete(entries, name)
		} else {
			entries[name] = object.TreeEntry{Name: name, Mode: filemode.Dir, Hash: h}
		}
	}
	list := make([]object.TreeEntry, 0, len(entries))
	for _, e := range entries {
		list = append(list, e)
	}
	sort.Sort(object.TreeEntrySorter(list))
	t := &object.Tree{Entries: list}
	obj := p.repo.Storer.NewEncodedObject()
	if err := t.Encode(obj); err != nil {
		return plumbing.ZeroHash, false, err
	}
	h, err := p.repo.Storer.SetEncodedObject(obj)
	return h, len(list) == 0, err
}

// blob stores a change's content as a blob. The content is streamed
// from the workspace once, into a spool file the harness owns, hashing as
// it goes; only then is it written as an object, so a file that changes
// mid-read fails the commit instead of leaving a half-written object.
func (p *promotion) blob(c *sandbox.Change) (plumbing.Hash, filemode.FileMode, error) {
	mode := filemode.Regular
	switch {
	case c.Mode&os.ModeSymlink != 0:
		mode = filemode.Symlink
	case c.Mode&0o100 != 0:
		mode = filemode.Executable
	}
	spool, err := os.CreateTemp(p.dir, "spool-")
	if err != nil {
		return plumbing.ZeroHash, 0, err
	}
	defer os.Remove(spool.Name())
	defer spool.Close()
	h := plumbing.NewHasher(plumbing.BlobObject, c.Size)
	if err := copyContent(io.MultiWriter(spool, h), *c); err != nil {
		return plumbing.ZeroHash, 0, err
	}
	sum := h.Sum()
	if p.repo.Storer.HasEncodedObject(sum) == nil {
		return sum, mode, nil
	}
	got, err := p.repo.Storer.SetEncodedObject(&spooledBlob{f: spool, size: c.Size, hash: sum})
	if err == nil && got != sum {
		err = fmt.Errorf("%s: stored blob %s, expected %s", c.Path, got, sum)
	}
	return sum, mode, err
}

// spooledBlob is a blob whose content sits in a harness-owned file.
type spooledBlob struct {
	f    *os.File
	size int64
	hash plumbing.Hash
}

func (b *spooledBlob) Hash() plumbing.Hash         { return b.hash }
func (b *spooledBlob) Type() plumbing.ObjectType   { return plumbing.BlobObject }
func (b *spooledBlob) SetType(plumbing.ObjectType) {}
func (b *spooledBlob) Size() int64                 { return b.size }
func (b *spooledBlob) SetSize(int64)               {}
func (b *spooledBlob) Writer() (io.WriteCloser, error) {
	return nil, errors.New("spooled blobs are read-only")
}
func (b *spooledBlob) Reader() (io.ReadCloser, error) {
	return io.NopCloser(io.NewSectionReader(b.f, 0, b.size)), nil
}

// candidate builds a throwaway commit of the current change, for stats
// and diffs.
func (w *Workspace) candidate() (*promotion, *object.Commit, error) {
	changes, err := w.Changes()
	if err != nil {
		return nil, nil, err
	}
	return w.candidateOf(changes)
}

// candidateOf builds the throwaway commit of a given change.
func (w *Workspace) candidateOf(changes []sandbox.Change) (*promotion, *object.Commit, error) {
	p, err := w.promotion()
	if err != nil {
		return nil, nil, err
	}
	sig := object.Signature{Name: "sandgate", Email: "sandgate@localhost", When: time.Unix(0, 0).UTC()}
	c, err := p.commit(changes, "candidate\n", sig)
	return p, c, err
}

// Diff renders the change so far as a unified diff against the base.
func (w *Workspace) Diff() (string, error) {
	p, c, err := w.candidate()
	if err != nil {
		return "", err
	}
	patch, err := p.base.Patch(c)
	if err != nil {
		return "", err
	}
	return patch.String(), nil
}

func plumbingHash(s string) plumbing.Hash { return plumbing.NewHash(s) }
