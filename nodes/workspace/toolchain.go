package workspace

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"time"

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

// PrepareToolchainFiles creates an empty go.work.sum before a gate runs,
// where Go would create one and it would be bookkeeping (see
// ToolchainFiles): Go treats a missing file as an empty one, and with the
// file in place its writes change only that file. Created during the gate,
// it would also change the directory, which is how a file made and
// removed again shows, and that must keep voiding a verdict. The caller
// holds the box exclusively.
func (w *Workspace) PrepareToolchainFiles(ctx context.Context) error {
	changes, err := w.Changes()
	if err != nil {
		return err
	}
	for _, c := range changes {
		if c.Path == GoWorkSum && !c.Deleted {
			return nil
		}
	}
	probe := append(append([]sandbox.Change(nil), changes...), sandbox.Change{Path: GoWorkSum, Mode: 0o644})
	files, err := w.ToolchainFiles(probe)
	if err != nil || !files[GoWorkSum] {
		return err
	}
	// noclobber: nothing that appeared meanwhile, a link included, is
	// followed or truncated.
	res, err := w.Exec(ctx, "set -C; : > "+GoWorkSum, time.Minute)
	if err != nil {
		return err
	}
	if res.ExitCode != 0 {
		return errors.New("create an empty " + GoWorkSum + ": " + string(res.Output))
	}
	return nil
}
