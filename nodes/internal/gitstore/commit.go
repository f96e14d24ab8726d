package gitstore

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/sandgate/sandgate/nodes/internal/atomicfile"
	"github.com/sandgate/sandgate/sandbox"
)

// Repo is a run's own bare repository (its promotion repository),
// outside the box, where the verified change becomes a commit. It borrows
// the snapshot's objects through git alternates, so neither the user's
// repository nor the shared snapshot is ever written. Every step reads
// only the trees on the changed paths and the changed files' base blobs
// (see objectStore).
type Repo struct {
	objs     *objectStore
	base     plumbing.Hash
	baseTree plumbing.Hash
	dir      string
	// check refuses a change that must not leave the run (the
	// workspace's CheckPromotable).
	check func([]sandbox.Change) error
}

// Open opens the promotion repository in dir, creating it on first use
// with snapshot's objects (its own .git/objects, see
// sandbox.SnapshotOwnDir) as its alternates, and reads base, the commit
// every change is made against. check refuses a change that must not
// leave the run; every commit runs it.
func Open(dir, snapshot, base string, check func([]sandbox.Change) error) (*Repo, error) {
	if _, err := os.Stat(dir); err != nil {
		if _, err := git.PlainInit(dir, true); err != nil {
			return nil, fmt.Errorf("create promotion repository: %w", err)
		}
		alt := filepath.Join(sandbox.SnapshotOwnDir(snapshot), ".git", "objects") + "\n"
		if err := os.WriteFile(filepath.Join(dir, "objects", "info", "alternates"), []byte(alt), 0o644); err != nil {
			return nil, err
		}
	}
	objs := newObjectStore(dir)
	h := plumbing.NewHash(base)
	tree, err := objs.commitTree(h)
	if err != nil {
		objs.Close()
		return nil, fmt.Errorf("base commit %s in %s: %w", base, dir, err)
	}
	return &Repo{objs: objs, base: h, baseTree: tree, dir: dir, check: check}, nil
}

// Close stops the repository's object reader.
func (p *Repo) Close() error { return p.objs.Close() }

// Dir is the repository's directory.
func (p *Repo) Dir() string { return p.dir }

// Base is the commit changes are made against.
func (p *Repo) Base() plumbing.Hash { return p.base }

// BaseTree is the base commit's tree.
func (p *Repo) BaseTree() plumbing.Hash { return p.baseTree }

// Git runs a read-only git command in the repository; no external diff or
// textconv driver and no one's configuration apply.
func (p *Repo) Git(ctx context.Context, args ...string) (string, error) {
	return gitText(ctx, p.dir, args...)
}

// SetBranch points branch at commit.
func (p *Repo) SetBranch(branch, commit string) error {
	refFile := filepath.Join(p.dir, filepath.FromSlash(plumbing.NewBranchReferenceName(branch).String()))
	if err := os.MkdirAll(filepath.Dir(refFile), 0o755); err != nil {
		return err
	}
	return atomicfile.Write(refFile, []byte(commit+"\n"))
}

// Commit is a commit the repository wrote.
type Commit struct {
	Hash, TreeHash plumbing.Hash
	// Ignored are the changed paths git would ignore, left out (sorted).
	Ignored []string
}

// CommitChange splits changes by the ignore rules (Promoted) and commits
// what leaves.
func (p *Repo) CommitChange(parent plumbing.Hash, changes []sandbox.Change, msg string, author object.Signature) (*Commit, error) {
	kept, ignored, err := p.Promoted(changes)
	if err != nil {
		return nil, err
	}
	return p.CommitSplit(parent, changes, kept, ignored, msg, author)
}

// CommitSplit builds a commit of kept, the part of changes that leaves
// (see Promoted: the caller has split it already), whose parent is parent (the
// base commit, or the run's previous commit on the branch): the base tree
// with the changed subtrees rewritten, nothing else read. It refuses a
// change that must not leave the run (the check Open was given), judged on
// everything the box changed, ignored files included.
func (p *Repo) CommitSplit(parent plumbing.Hash, changes, kept []sandbox.Change, ignored []string, msg string, author object.Signature) (*Commit, error) {
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
	return &Commit{Hash: h, TreeHash: treeHash, Ignored: ignored}, err
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
func (p *Repo) rebuild(treeHash plumbing.Hash, d *dirChange) (plumbing.Hash, bool, error) {
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
	// Directories first: a directory the change replaced by a file shows
	// as the file and the deletions below it, and the file must win over
	// the emptied directory (a file replaced by a directory shows no
	// deletion of the file, and a deleted file never removes a directory).
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
	list := make([]object.TreeEntry, 0, len(entries))
	for _, e := range entries {
		list = append(list, e)
	}
	sort.Sort(object.TreeEntrySorter(list))
	if err := foldCollision(list, d); err != nil {
		return plumbing.ZeroHash, false, err
	}
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
func (p *Repo) blob(c *sandbox.Change) (plumbing.Hash, filemode.FileMode, error) {
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
	if err := CopyContent(io.MultiWriter(spool, h), *c); err != nil {
		return plumbing.ZeroHash, 0, err
	}
	sum := h.Sum()
	err = p.objs.writeLoose(sum, plumbing.BlobObject, c.Size, io.NewSectionReader(spool, 0, c.Size))
	if err != nil {
		err = fmt.Errorf("%s: %w", c.Path, err)
	}
	return sum, mode, err
}
