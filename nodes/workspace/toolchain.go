package workspace

import (
	"os"
	"path/filepath"

	"github.com/sandgate/sandgate/sandbox"
)

// GoWorkSum is where the go command records, in workspace mode, the
// checksums it verified that no module's go.sum holds. Every go command
// in a fresh clone of a repository with a go.work writes it (go list -m
// and go vet included, under any -mod), in a user's clone and in CI
// alike, and most such repositories ignore it in .gitignore.
const GoWorkSum = "go.work.sum"

// ToolchainFiles lists the changes that are the Go toolchain's own
// bookkeeping rather than part of the change: go.work.sum beside the
// repository's go.work, when the base does not track it and the
// repository's .gitignore ignores it. It never leaves the run (a commit
// leaves ignored files out), so it is not fingerprinted, and a gate's go
// command that records a checksum there does not void the gate's
// verdict (see the gate package). A go.work.sum that would be committed,
// or that the base tracks, is part of the change like any file.
func (w *Workspace) ToolchainFiles(changes []sandbox.Change) (map[string]bool, error) {
	var sum, ignore *sandbox.Change
	hasWork := w.inBase("go.work")
	for i, c := range changes {
		switch c.Path {
		case GoWorkSum:
			sum = &changes[i]
		case ".gitignore":
			ignore = &changes[i]
		case "go.work":
			hasWork = !c.Deleted && c.Mode.IsRegular()
		}
	}
	if sum == nil || sum.Deleted || !sum.Mode.IsRegular() || !hasWork || w.inBase(GoWorkSum) {
		return nil, nil
	}
	ok, err := w.ignored(*sum, ignore)
	if err != nil || !ok {
		return nil, err
	}
	return map[string]bool{GoWorkSum: true}, nil
}

// ignored reports whether the repository's root .gitignore, as the change
// leaves it (ignore is its change, if any), ignores c.
func (w *Workspace) ignored(c sandbox.Change, ignore *sandbox.Change) (bool, error) {
	p, err := w.Promotion()
	if err != nil {
		return false, err
	}
	probe := []sandbox.Change{c}
	if ignore != nil {
		probe = append(probe, *ignore)
	}
	_, names, err := p.Promoted(probe)
	for _, n := range names {
		if n == c.Path {
			return true, err
		}
	}
	return false, err
}

// inBase reports whether the base snapshot holds rel.
func (w *Workspace) inBase(rel string) bool {
	_, err := os.Lstat(filepath.Join(w.Snapshot, filepath.FromSlash(rel)))
	return err == nil
}
