package gate

import (
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"

	"github.com/sandgate/sandgate/nodes/workspace"
	"github.com/sandgate/sandgate/sandbox"
)

// stamp is what the kernel says about one workspace entry. The inode
// change time cannot be set from user space, so a file rewritten and put
// back during a gate still shows up, which comparing contents would miss.
type stamp struct {
	ino, size uint64
	ctime     int64
	mode      fs.FileMode
}

// stamps records every entry of a workspace's written layer: an
// overlay's upper layer, or the whole copy when the workspace is one.
// Paths under .git are left out, as Changes leaves them out.
func stamps(root string) (map[string]stamp, error) {
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

// written is the run box's written layer.
func written(w *workspace.Workspace) string {
	if up := w.Box.Upper(); up != "" {
		return up
	}
	return w.Box.Merged()
}

// wsState is the workspace as a gate found it.
type wsState struct {
	fp      string
	stamps  map[string]stamp
	changes []sandbox.Change
	// toolchain are the Go toolchain's bookkeeping files a gate's go
	// command may update (workspace.ToolchainFiles).
	toolchain map[string]bool
}

func observe(w *workspace.Workspace) (wsState, error) {
	st, err := stamps(written(w))
	if err != nil {
		return wsState{}, fmt.Errorf("read the workspace's state: %w", err)
	}
	changes, err := w.Changes()
	if err != nil {
		return wsState{}, err
	}
	tc, err := w.ToolchainFiles(changes)
	if err != nil {
		return wsState{}, err
	}
	fp, err := w.FingerprintOf(changes)
	return wsState{fp: fp, stamps: st, changes: changes, toolchain: tc}, err
}

// changedSince lists the entries written since before; directories end
// in a slash (a file created and removed again shows as its directory).
// The toolchain's bookkeeping, in both states, is no write of the
// gate's: it is returned apart (see workspace.ToolchainFiles).
func (s wsState) changedSince(before wsState) (out, toolchain []string) {
	label := func(p string, st stamp) string {
		switch {
		case p == ".":
			return "./"
		case st.mode.IsDir():
			return p + "/"
		}
		return p
	}
	add := func(p string, st stamp) {
		if s.toolchain[p] && before.toolchain[p] {
			toolchain = append(toolchain, p)
			return
		}
		out = append(out, label(p, st))
	}
	for p, st := range s.stamps {
		if b, ok := before.stamps[p]; !ok || b != st {
			add(p, st)
		}
	}
	for p, st := range before.stamps {
		if _, ok := s.stamps[p]; !ok {
			add(p, st)
		}
	}
	sort.Strings(out)
	if len(out) == 0 && s.fp != before.fp {
		out = []string{"(the change's content differs)"}
	}
	return out, toolchain
}

// classify labels each written path by what it is to the change after
// the gate: a file the change holds, one git would ignore (it never
// leaves the run, yet later gates in this box would see it), or one the
// base holds that the change no longer does.
func classify(w *workspace.Workspace, paths []string) []string {
	changes, err := w.Changes()
	if err != nil {
		return paths
	}
	inChange := map[string]sandbox.Change{}
	for _, c := range changes {
		inChange[c.Path] = c
	}
	ignored := map[string]bool{}
	if p, err := w.Promotion(); err == nil {
		if _, names, err := p.Promoted(changes); err == nil {
			for _, n := range names {
				ignored[n] = true
			}
		}
	}
	out := make([]string, len(paths))
	for i, p := range paths {
		c, ok := inChange[p]
		switch {
		case strings.HasSuffix(p, "/") || strings.HasPrefix(p, "("):
			out[i] = p
		case ignored[p]:
			out[i] = p + " (ignored by git)"
		case ok && c.Deleted:
			out[i] = p + " (deleted, a file the repository tracks)"
		case ok:
			out[i] = p + " (part of the change)"
		default:
			out[i] = p + " (back to its base content, or removed)"
		}
	}
	return out
}
