package nodes

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/sandgate/sandgate/sandbox"
)

// promotion is the run's own bare repository, outside the box, where the
// verified change becomes a commit. It borrows the snapshot's objects
// through git alternates, so neither the user's repository nor the shared
// snapshot is ever written. Every step reads only the trees on the changed
// paths and the changed files' base blobs (see objectStore).
type promotion struct {
	objs     *objectStore
	base     plumbing.Hash
	baseTree plumbing.Hash
	dir      string
	// check is the workspace's checkPromotable.
	check func([]sandbox.Change) error
}

// builtCommit is a commit promotion wrote.
type builtCommit struct {
	Hash, TreeHash plumbing.Hash
	// Ignored are the changed paths git would ignore, left out (sorted).
	Ignored []string
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
	objs := newObjectStore(dir)
	base := plumbing.NewHash(w.Base)
	tree, err := objs.commitTree(base)
	if err != nil {
		objs.Close()
		return nil, fmt.Errorf("base commit %s in %s: %w", w.Base, dir, err)
	}
	w.promo = &promotion{objs: objs, base: base, baseTree: tree, dir: dir, check: w.checkPromotable}
	return w.promo, nil
}

// closePromotion stops the promotion repository's object reader.
func (w *Workspace) closePromotion() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.promo == nil {
		return nil
	}
	err := w.promo.objs.Close()
	w.promo = nil
	return err
}

// commitChange splits changes by the ignore rules (promoted) and commits
// what leaves.
func (p *promotion) commitChange(parent plumbing.Hash, changes []sandbox.Change, msg string, author object.Signature) (*builtCommit, error) {
	kept, ignored, err := p.promoted(changes)
	if err != nil {
		return nil, err
	}
	return p.commit(parent, changes, kept, ignored, msg, author)
}

// commit builds a commit of kept, the part of changes that leaves (see
// promoted: the caller has split it already), whose parent is parent (the
// base commit, or the run's previous commit on the branch): the base tree
// with the changed subtrees rewritten, nothing else read. It refuses a
// change that must not leave the run (see checkPromotable), judged on
// everything the box changed, ignored files included.
func (p *promotion) commit(parent plumbing.Hash, changes, kept []sandbox.Change, ignored []string, msg string, author object.Signature) (*builtCommit, error) {
	if err := p.check(changes); err != nil {
		return nil, err
	}
	treeHash, _, err := p.rebuild(p.baseTree, changeTree(kept))
	if err != nil {
		return nil, err
	}
	c := &object.Commit{Author: author, Committer: author, Message: msg, TreeHash: treeHash, ParentHashes: []plumbing.Hash{parent}}
	obj := &plumbing.MemoryObject{}
	if err := c.Encode(obj); err != nil {
		return nil, err
	}
	h, err := p.objs.write(obj)
	return &builtCommit{Hash: h, TreeHash: treeHash, Ignored: ignored}, err
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
func (p *promotion) rebuild(treeHash plumbing.Hash, d *dirChange) (plumbing.Hash, bool, error) {
	entries := map[string]object.TreeEntry{}
	if !treeHash.IsZero() {
		tree, err := p.objs.tree(treeHash)
		if err != nil {
			return plumbing.ZeroHash, false, err
		}
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
		var subTree plumbing.Hash
		if e, ok := entries[name]; ok && e.Mode == filemode.Dir {
			subTree = e.Hash
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
	obj := &plumbing.MemoryObject{}
	if err := t.Encode(obj); err != nil {
		return plumbing.ZeroHash, false, err
	}
	h, err := p.objs.write(obj)
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
	err = p.objs.writeLoose(sum, plumbing.BlobObject, c.Size, io.NewSectionReader(spool, 0, c.Size))
	if err != nil {
		err = fmt.Errorf("%s: %w", c.Path, err)
	}
	return sum, mode, err
}

// candidate builds a throwaway commit of the current change, for stats
// and diffs.
func (w *Workspace) candidate() (*promotion, *builtCommit, error) {
	changes, err := w.Changes()
	if err != nil {
		return nil, nil, err
	}
	return w.candidateOf(changes)
}

// candidateOf builds the throwaway commit of a given change.
func (w *Workspace) candidateOf(changes []sandbox.Change) (*promotion, *builtCommit, error) {
	p, err := w.promotion()
	if err != nil {
		return nil, nil, err
	}
	sig := object.Signature{Name: "sandgate", Email: "sandgate@localhost", When: time.Unix(0, 0).UTC()}
	c, err := p.commitChange(p.base, changes, "candidate\n", sig)
	return p, c, err
}

// Diff renders the change so far as a unified diff against the base.
// The text is kept per tree, so the end of a run does not diff again
// what a node already diffed.
func (w *Workspace) Diff() (string, error) {
	p, c, err := w.candidate()
	if err != nil {
		return "", err
	}
	return w.patch(context.Background(), p, c.TreeHash)
}

// Patch renders the change so far as a patch `git apply` takes: binary
// files as git binary patches, with full blob ids.
func (w *Workspace) Patch() ([]byte, error) {
	p, c, err := w.candidate()
	if err != nil {
		return nil, err
	}
	text, err := gitText(context.Background(), p.dir, "diff-tree", "-p", "-r", "--binary", "--full-index", "--no-color",
		"--no-ext-diff", "--no-textconv", "--no-renames", p.baseTree.String(), c.TreeHash.String())
	return []byte(text), err
}

// patch diffs the base tree against tree with git diff-tree, which reads
// only the subtrees whose hashes differ and the changed blobs. No external
// diff or textconv driver runs.
func (w *Workspace) patch(ctx context.Context, p *promotion, tree plumbing.Hash) (string, error) {
	w.mu.Lock()
	if w.lastPatch.tree == tree {
		defer w.mu.Unlock()
		return w.lastPatch.text, nil
	}
	w.mu.Unlock()
	text, err := gitText(ctx, p.dir, "diff-tree", "-p", "-r", "--no-color", "--no-ext-diff", "--no-textconv", "--no-renames",
		p.baseTree.String(), tree.String())
	if err != nil {
		return "", err
	}
	w.mu.Lock()
	w.lastPatch.tree, w.lastPatch.text = tree, text
	w.mu.Unlock()
	return text, nil
}
