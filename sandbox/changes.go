package sandbox

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
)

// Change is one path that differs between the base snapshot and the
// workspace. Paths are slash-separated and relative to the workspace.
type Change struct {
	Path    string      `json:"path"`
	Deleted bool        `json:"deleted,omitempty"`
	Mode    fs.FileMode `json:"mode,omitempty"`
	// Link is the target of a symbolic link; links are recorded, never
	// followed.
	Link    string `json:"link,omitempty"`
	Content []byte `json:"-"`
}

// maxChangeBytes caps a single changed file read by the harness.
const maxChangeBytes = 64 << 20

// Changes lists what differs between the snapshot (lower) and the
// workspace. With an overlay, only the upper layer is walked, so the cost
// follows the size of the change, not of the repository. Paths under .git
// are ignored: the repository's history is not the agent's to change.
//
// The harness reads what commands wrote, on the host, possibly while a
// command still runs and renames things under it: every path is resolved
// inside its layer (os.Root), so a directory swapped for a link to a host
// directory is refused, never followed; and only regular files are read.
func Changes(lower, upper, merged string) ([]Change, error) {
	view := merged
	if upper != "" {
		view = upper
	}
	lr, err := os.OpenRoot(lower)
	if err != nil {
		return nil, err
	}
	defer lr.Close()
	vr, err := os.OpenRoot(view)
	if err != nil {
		return nil, err
	}
	defer vr.Close()
	var cands map[string]bool
	if upper != "" {
		cands, err = overlayCandidates(lr, vr)
	} else {
		cands, err = treeCandidates(lr, vr)
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
		var now entry
		if upper != "" {
			now, err = overlayEntry(lr, vr, p)
		} else {
			now, err = readEntry(vr, p)
		}
		if err != nil {
			return nil, err
		}
		before, err := readEntry(lr, p)
		if err != nil {
			return nil, err
		}
		if now.equal(before) || now.isDir || (now.missing && before.isDir) {
			continue
		}
		c := Change{Path: filepath.ToSlash(p), Deleted: now.missing, Mode: now.mode, Link: now.link, Content: now.data}
		out = append(out, c)
	}
	return out, nil
}

// entry is what a path holds: nothing, a directory, a file or a link.
type entry struct {
	missing bool
	isDir   bool
	mode    fs.FileMode
	link    string
	data    []byte
}

func (e entry) equal(o entry) bool {
	return e.missing == o.missing && e.isDir == o.isDir && e.link == o.link &&
		e.mode.Perm()&0o100 == o.mode.Perm()&0o100 && string(e.data) == string(o.data)
}

// readEntry reads a path inside root without following a final symbolic
// link. The file is checked again once open: a regular file swapped for a
// fifo or a device in between is neither waited on nor read.
func readEntry(root *os.Root, rel string) (entry, error) {
	st, err := root.Lstat(rel)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return entry{missing: true}, nil
	}
	if err != nil {
		return entry{}, fmt.Errorf("%s: %w", filepath.Join(root.Name(), rel), err)
	}
	switch {
	case st.IsDir():
		return entry{isDir: true}, nil
	case st.Mode()&fs.ModeSymlink != 0:
		l, err := root.Readlink(rel)
		return entry{link: l, mode: fs.ModeSymlink}, err
	case !st.Mode().IsRegular():
		return entry{missing: true}, nil // devices, fifos, sockets never leave
	}
	f, err := root.OpenFile(rel, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return entry{}, fmt.Errorf("%s: %w", filepath.Join(root.Name(), rel), err)
	}
	defer f.Close()
	if st, err = f.Stat(); err != nil || !st.Mode().IsRegular() {
		return entry{}, fmt.Errorf("%s: changed while it was read (not a regular file any more)", filepath.Join(root.Name(), rel))
	}
	data, err := io.ReadAll(io.LimitReader(f, maxChangeBytes+1))
	if err != nil {
		return entry{}, err
	}
	if len(data) > maxChangeBytes {
		return entry{}, fmt.Errorf("%s: changed file larger than %d MiB", filepath.Join(root.Name(), rel), maxChangeBytes>>20)
	}
	return entry{mode: st.Mode() & (fs.ModePerm), data: data}, nil
}

func skipGit(rel string) bool {
	return rel == ".git" || strings.HasPrefix(rel, ".git"+string(filepath.Separator))
}

// treeCandidates lists every path of both trees (copy mode).
func treeCandidates(roots ...*os.Root) (map[string]bool, error) {
	out := map[string]bool{}
	for _, root := range roots {
		err := fs.WalkDir(root.FS(), ".", func(rel string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if rel == "." {
				return nil
			}
			if skipGit(rel) {
				return filepath.SkipDir
			}
			out[rel] = true
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// isWhiteout reports an overlayfs whiteout: a 0/0 character device.
func isWhiteout(st fs.FileInfo) bool {
	if st.Mode()&fs.ModeCharDevice == 0 {
		return false
	}
	sys, ok := st.Sys().(*syscall.Stat_t)
	return ok && sys.Rdev == 0
}

// overlayCandidates lists the paths the upper layer touches, expanding
// deleted or replaced directories into the lower paths they hide.
func overlayCandidates(lower, upper *os.Root) (map[string]bool, error) {
	out := map[string]bool{}
	err := fs.WalkDir(upper.FS(), ".", func(rel string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if rel == "." {
			return nil
		}
		if skipGit(rel) {
			return filepath.SkipDir
		}
		out[rel] = true
		st, err := upper.Lstat(rel)
		if err != nil {
			return err
		}
		if isWhiteout(st) || (st.IsDir() && isOpaque(upper, rel)) {
			addLowerTree(lower, rel, out)
		}
		return nil
	})
	return out, err
}

func addLowerTree(lower *os.Root, rel string, out map[string]bool) {
	_ = fs.WalkDir(lower.FS(), rel, func(r string, d fs.DirEntry, err error) error {
		if err == nil {
			out[r] = true
		}
		return nil
	})
}

// overlayEntry resolves a path in the merged view from its layers.
func overlayEntry(lower, upper *os.Root, rel string) (entry, error) {
	parts := strings.Split(rel, string(filepath.Separator))
	for i := 1; i < len(parts); i++ {
		anc := filepath.Join(parts[:i]...)
		st, err := upper.Lstat(anc)
		if err == nil && (isWhiteout(st) || !st.IsDir()) {
			return entry{missing: true}, nil
		}
		if err == nil && isOpaque(upper, anc) {
			return readEntry(upper, rel)
		}
	}
	st, err := upper.Lstat(rel)
	if err == nil {
		if isWhiteout(st) {
			return entry{missing: true}, nil
		}
		return readEntry(upper, rel)
	}
	return readEntry(lower, rel)
}
