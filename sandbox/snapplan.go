package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"
)

// checkoutPlan is what a snapshot's checkout writes: its trees verified
// against their names, its blobs sized (and verified by verifyBlobs).
type checkoutPlan struct {
	// blobBytes is what the blobs the checkout writes hold.
	blobBytes int64
	// replaced are the base snapshot's files (blobs and symlinks) the
	// checkout replaces or deletes: unlinked before git runs, so nothing
	// can write into an inode the base shares.
	replaced []string
	// written are the files and directories the checkout creates: what a
	// snapshot built on a base adds besides the directories it makes.
	written []string
	// blobs are the blobs the checkout writes, to verify (verifyBlobs).
	blobs []string
	// missing are objects the store lacks.
	missing []string
	// corrupt is the first object whose content does not match its name.
	corrupt error
	// attributes: a .gitattributes of a directory the base has too
	// differs from the base's. How git converts a file it checks out
	// (eol, ident, working-tree-encoding) follows them, and git leaves
	// the files the commit does not change as the base converted them.
	attributes bool
}

// treePair is a tree of the new commit and the base's tree at the same
// path ("" when the base has none there).
type treePair struct{ newID, oldID, path string }

// planCheckout reads commit and its tree through the repository gitDir
// (a snapshot being built, borrowing the store) and verifies what the
// checkout will write: with baseCommit set, only the subtrees and blobs
// that differ from the base commit's (the snapshot links the rest from
// the base's snapshot, verified when that was built); else all of it.
func planCheckout(ctx context.Context, gitDir, format, commit, baseCommit string) (*checkoutPlan, error) {
	r, err := newObjReader(ctx, gitDir, format)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	idLen := 20
	if format == "sha256" {
		idLen = 32
	}
	p := &checkoutPlan{}
	roots := []string{commit}
	if baseCommit != "" {
		roots = append(roots, baseCommit)
	}
	trees := make([]string, len(roots))
	err = r.getMany(roots, true, func(i int, o object) error {
		if o.err != nil {
			return o.err
		}
		if o.typ != "commit" || !bytes.HasPrefix(o.data, []byte("tree ")) || len(o.data) < 5+2*idLen {
			return fmt.Errorf("%s is not a commit", roots[i])
		}
		trees[i] = string(o.data[5 : 5+2*idLen])
		return nil
	})
	if err != nil {
		var m errMissing
		if errors.As(err, &m) {
			p.missing = append(p.missing, m.id)
			return p, nil
		}
		return nil, err
	}
	level := []treePair{{newID: trees[0]}}
	if baseCommit != "" {
		level[0].oldID = trees[1]
	}
	var blobs []string
	for len(level) > 0 {
		var next []treePair
		if next, blobs, err = p.walkLevel(r, level, blobs, idLen); err != nil {
			return nil, err
		}
		level = next
	}
	p.blobs = blobs
	err = p.sizeBlobs(ctx, gitDir)
	slices.Sort(p.missing)
	return p, err
}

// sizeBlobs reads the blobs' types and sizes (not their content: that is
// verifyBlobs, which can run beside the checkout), so a tree too big for
// the cache is refused before anything is written.
func (p *checkoutPlan) sizeBlobs(ctx context.Context, gitDir string) error {
	if len(p.blobs) == 0 {
		return nil
	}
	out, err := gitCmd{env: ownGitEnv(""), stdin: strings.NewReader(strings.Join(p.blobs, "\n") + "\n"),
		args: []string{"--git-dir=" + gitDir, "cat-file", "--batch-check"}}.run(ctx)
	if err != nil {
		return err
	}
	lines := strings.Split(out, "\n")
	if len(lines) != len(p.blobs) {
		return fmt.Errorf("git cat-file --batch-check answered %d of %d blobs", len(lines), len(p.blobs))
	}
	for i, l := range lines {
		f := strings.Fields(l)
		switch {
		case len(f) == 2 && f[0] == p.blobs[i] && f[1] == "missing":
			p.missing = append(p.missing, f[0])
		case len(f) == 3 && f[0] == p.blobs[i] && f[1] == "blob":
			n, err := strconv.ParseInt(f[2], 10, 64)
			if err != nil || n < 0 {
				return fmt.Errorf("git cat-file: bad size in %q", l)
			}
			p.blobBytes += n
		default:
			return fmt.Errorf("object %s: a tree names it as a file, git says %q", p.blobs[i], l)
		}
	}
	return nil
}

// verifyBlobs reads the content of every blob the checkout writes and
// checks it hashes to its name.
func verifyBlobs(ctx context.Context, gitDir, format string, blobs []string) error {
	r, err := newObjReader(ctx, gitDir, format)
	if err != nil {
		return err
	}
	defer r.Close()
	return r.getMany(blobs, false, func(i int, o object) error { return o.err })
}

// walkLevel reads one level of tree pairs and returns the next level and
// the blobs to check so far.
func (p *checkoutPlan) walkLevel(r *objReader, level []treePair, blobs []string, idLen int) ([]treePair, []string, error) {
	var ids []string
	for _, t := range level {
		ids = append(ids, t.newID)
		if t.oldID != "" {
			ids = append(ids, t.oldID)
		}
	}
	read := map[string]map[string]treeEntry{}
	err := r.getMany(ids, true, func(i int, o object) error {
		if p.note(o) {
			return nil
		}
		if o.typ != "tree" {
			return fmt.Errorf("object %s is a %s, not a tree", ids[i], o.typ)
		}
		entries, err := parseTree(ids[i], o.data, idLen)
		read[ids[i]] = entries
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	var next []treePair
	for _, t := range level {
		newE, ok := read[t.newID]
		if !ok {
			continue // missing: noted, walked again once imported
		}
		oldE := read[t.oldID]
		if t.oldID != "" && oldE == nil {
			return nil, nil, fmt.Errorf("the base's tree %s is unreadable", t.oldID)
		}
		for name, n := range newE {
			o, inOld := oldE[name]
			if inOld && o == n {
				continue
			}
			at := path.Join(t.path, name)
			p.attributes = p.attributes || t.oldID != "" && name == ".gitattributes"
			if inOld && o.isFile() {
				p.replaced = append(p.replaced, at)
			}
			if !inOld || !o.isTree() || !n.isTree() {
				p.written = append(p.written, at)
			}
			switch {
			case n.isTree():
				sub := treePair{newID: n.id, path: at}
				if inOld && o.isTree() {
					sub.oldID = o.id
				}
				next = append(next, sub)
			case n.isFile():
				blobs = append(blobs, n.id)
			}
		}
		for name, o := range oldE {
			if _, kept := newE[name]; !kept && o.isFile() {
				p.replaced = append(p.replaced, path.Join(t.path, name))
				p.attributes = p.attributes || name == ".gitattributes"
			}
		}
	}
	return next, blobs, nil
}

// note records a missing or corrupt object and reports whether o was one.
func (p *checkoutPlan) note(o object) bool {
	var m errMissing
	switch {
	case o.err == nil:
		return false
	case errors.As(o.err, &m):
		p.missing = append(p.missing, m.id)
	case p.corrupt == nil:
		p.corrupt = o.err
	}
	return true
}
