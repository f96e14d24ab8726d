//go:build linux

package sandbox

import (
	"errors"
	"io/fs"
	"path"
	"sort"
	"strings"
)

// Changes lists what differs between the snapshot (lower) and the
// workspace. With an overlay, only the upper layer is walked, so the cost
// follows the size of the change, not of the repository. Changes inside
// .git are listed like any other path: the repository's history is not
// the agent's to change, and the promotion refuses such a change by name
// instead of silently dropping it.
//
// Commands in the box may run while this reads: nothing is followed out
// of the layers and nothing is opened in a way that can block (see
// openBeneath); a file swapped after it was listed fails Open with
// ErrChanged.
func Changes(lower, upper, merged string) ([]Change, error) {
	var cands map[string]bool
	var err error
	if upper != "" {
		cands, err = overlayCandidates(lower, upper)
	} else {
		cands, err = treeCandidates(lower, merged)
	}
	if err != nil {
		return nil, err
	}
	paths := make([]string, 0, len(cands))
	for p := range cands {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	var out []Change
	for _, p := range paths {
		now := located{root: merged}
		if upper != "" {
			now, err = overlayEntry(lower, upper, p)
		} else {
			now.node, err = statBeneath(merged, p)
		}
		if err != nil {
			return nil, err
		}
		before := located{root: lower}
		if before.node, err = statBeneath(lower, p); err != nil {
			return nil, err
		}
		same, err := sameEntry(now, before, p)
		if err != nil {
			return nil, err
		}
		if same || now.isDir() || (now.gone() && before.isDir()) {
			continue
		}
		out = append(out, now.change(p))
	}
	return out, nil
}

// located is a path's node and the layer root it was found in.
type located struct {
	node
	root string
}

// gone: devices, fifos and sockets never leave the box, so to the change
// they are as good as absent.
func (l located) gone() bool { return l.missing || l.special() }

func (l located) change(rel string) Change {
	switch {
	case l.gone():
		return Change{Path: rel, Deleted: true}
	case l.isLink():
		return Change{Path: rel, Mode: fs.ModeSymlink, Link: l.link, Size: int64(len(l.link))}
	}
	return Change{Path: rel, Mode: fs.FileMode(l.st.Mode) & fs.ModePerm, Size: l.st.Size,
		src: &source{root: l.root, rel: rel, want: l.node}}
}

// sameEntry reports whether two layers hold the same thing at rel. Files
// of equal size are compared byte by byte, streaming.
func sameEntry(a, b located, rel string) (bool, error) {
	switch {
	case a.gone() || b.gone():
		return a.gone() && b.gone(), nil
	case a.isDir() || b.isDir():
		return a.isDir() && b.isDir(), nil
	case a.isLink() || b.isLink():
		return a.isLink() && b.isLink() && a.link == b.link, nil
	case a.exec() != b.exec() || a.st.Size != b.st.Size:
		return false, nil
	}
	same, err := sameBytes(a, b, rel)
	if errors.Is(err, ErrChanged) {
		return false, nil // listed as changed; Open re-checks and refuses
	}
	return same, err
}

// walk visits every path below dir rel of root, parents first; visit
// says whether to descend into a path.
func walk(root, rel string, visit func(rel string) (bool, error)) error {
	stack := []string{rel}
	for len(stack) > 0 {
		dir := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		names, err := readDirBeneath(root, dir)
		if err != nil {
			return err
		}
		for _, name := range names {
			child := path.Join(dir, name)
			descend, err := visit(child)
			if err != nil {
				return err
			}
			if descend {
				stack = append(stack, child)
			}
		}
	}
	return nil
}

// treeCandidates lists every path of both trees (copy mode). The top-level
// .git is compared by metadata only (it is mounted read-only in the box,
// and reading all of history on every listing would be slow): any
// difference there is listed.
func treeCandidates(a, b string) (map[string]bool, error) {
	out := map[string]bool{}
	for _, root := range []string{a, b} {
		err := walk(root, "", func(rel string) (bool, error) {
			if rel == ".git" {
				return false, nil
			}
			out[rel] = true
			n, err := statBeneath(root, rel)
			return n.isDir(), err
		})
		if err != nil {
			return nil, err
		}
	}
	meta := [2]map[string]node{{}, {}}
	for i, root := range []string{a, b} {
		if n, err := statBeneath(root, ".git"); err != nil || !n.isDir() {
			meta[i][".git"] = n
			continue
		}
		err := walk(root, ".git", func(rel string) (bool, error) {
			n, err := statBeneath(root, rel)
			meta[i][rel] = n
			return n.isDir(), err
		})
		if err != nil {
			return nil, err
		}
	}
	for i := range meta {
		for rel, n := range meta[i] {
			if o, ok := meta[1-i][rel]; !ok || !sameMeta(n, o) {
				out[rel] = true
			}
		}
	}
	return out, nil
}

func sameMeta(a, b node) bool {
	return a.missing == b.missing && a.st.Mode == b.st.Mode && (a.isDir() ||
		a.st.Size == b.st.Size && a.st.Mtim == b.st.Mtim && a.link == b.link)
}

// overlayCandidates lists the paths the upper layer touches, expanding
// deleted or replaced directories into the lower paths they hide.
func overlayCandidates(lower, upper string) (map[string]bool, error) {
	out := map[string]bool{}
	err := walk(upper, "", func(rel string) (bool, error) {
		out[rel] = true
		n, err := statBeneath(upper, rel)
		if err != nil {
			return false, err
		}
		if n.whiteout() || (n.isDir() && opaqueBeneath(upper, rel)) || (!n.missing && !n.isDir()) {
			if err := addLowerTree(lower, rel, out); err != nil {
				return false, err
			}
		}
		return n.isDir(), nil
	})
	return out, err
}

// addLowerTree adds every lower path below rel.
func addLowerTree(lower, rel string, out map[string]bool) error {
	if n, err := statBeneath(lower, rel); err != nil || !n.isDir() {
		return err
	}
	return walk(lower, rel, func(r string) (bool, error) {
		out[r] = true
		n, err := statBeneath(lower, r)
		return n.isDir(), err
	})
}

// overlayEntry resolves a path in the merged view from its layers.
func overlayEntry(lower, upper, rel string) (located, error) {
	parts := strings.Split(rel, "/")
	for i := 1; i < len(parts); i++ {
		anc := strings.Join(parts[:i], "/")
		n, err := statBeneath(upper, anc)
		if err != nil {
			return located{}, err
		}
		if !n.missing && !n.isDir() {
			return located{node: node{missing: true}}, nil
		}
		if n.isDir() && opaqueBeneath(upper, anc) {
			n, err := statBeneath(upper, rel)
			return located{node: n, root: upper}, err
		}
	}
	n, err := statBeneath(upper, rel)
	if err != nil {
		return located{}, err
	}
	if n.whiteout() {
		return located{node: node{missing: true}}, nil
	}
	if !n.missing {
		return located{node: n, root: upper}, nil
	}
	n, err = statBeneath(lower, rel)
	return located{node: n, root: lower}, err
}
