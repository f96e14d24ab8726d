package gate

import (
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"

	"github.com/sandgate/sandgate/nodes/workspace"
)

// stamp is what the kernel says about one workspace entry. The inode
// change time cannot be set from user space, so a file rewritten and put
// back during a gate still shows up, which comparing contents would miss.
type stamp struct {
	ino, size uint64
	ctime     int64
	mode      fs.FileMode
}

// stamps records every entry the run has written: the overlay's upper
// layer, or the whole copy when the workspace is one. Paths under .git are
// left out, as Changes leaves them out.
func stamps(w *workspace.Workspace) (map[string]stamp, error) {
	root := w.Box.Upper()
	if root == "" {
		root = w.Box.Merged()
	}
	out := map[string]stamp{}
	if root == "" {
		return out, nil
	}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if rel == ".git" {
			return filepath.SkipDir
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		s, err := stampOf(info)
		if err != nil {
			return fmt.Errorf("stat %s: %w", p, err)
		}
		out[rel] = s
		return nil
	})
	return out, err
}

// wsState is the workspace as a gate found it.
type wsState struct {
	fp     string
	stamps map[string]stamp
}

func observe(w *workspace.Workspace) (wsState, error) {
	st, err := stamps(w)
	if err != nil {
		return wsState{}, fmt.Errorf("read the workspace's state: %w", err)
	}
	fp, err := w.Fingerprint()
	return wsState{fp: fp, stamps: st}, err
}

// changedSince lists the entries written since before; directories end
// in a slash (a file created and removed again shows as its directory).
func (s wsState) changedSince(before wsState) []string {
	var out []string
	label := func(p string, st stamp) string {
		switch {
		case p == ".":
			return "./"
		case st.mode.IsDir():
			return p + "/"
		}
		return p
	}
	for p, st := range s.stamps {
		if b, ok := before.stamps[p]; !ok || b != st {
			out = append(out, label(p, st))
		}
	}
	for p, st := range before.stamps {
		if _, ok := s.stamps[p]; !ok {
			out = append(out, label(p, st))
		}
	}
	sort.Strings(out)
	if len(out) == 0 && s.fp != before.fp {
		out = []string{"(the change's content differs)"}
	}
	return out
}
