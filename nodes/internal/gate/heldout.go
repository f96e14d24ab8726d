package gate

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/sandgate/sandgate/runtime"
)

// Held-out tests never enter the run's box: the run's /tmp and home last
// the whole run, so code under test could copy them there for the agent's
// next command. They run in the gate's judge box (judge.go), laid over
// the candidate there; the box and everything written in it are deleted
// when the gate ends. Their output stays out of the run's records and,
// unless the blueprint opts in with hidden_feedback: names, the agent
// learns only how many failed.

// HeldOut is implemented by a gate node that may run held-out tests (the
// test gate): the directory of the tests, "" for none, and whether the
// agent may learn the failing tests' names (hidden_feedback: names)
// rather than only how many failed.
type HeldOut interface {
	HeldOut() (dir string, names bool)
}

// HiddenFiles lists a held-out test directory's files as slash paths.
func HiddenFiles(dir string) ([]string, error) {
	var files []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		switch {
		case d.IsDir():
			return nil
		case !d.Type().IsRegular():
			return fmt.Errorf("%s: only regular files can be held-out tests", p)
		}
		files = append(files, filepath.ToSlash(rel))
		return nil
	})
	return files, err
}

// placeHidden writes the held-out tests into the judge box's layer (or
// copy), which holds the candidate (see place).
func placeHidden(snapshot, dir string, files []string, root string) error {
	data := make(map[string][]byte, len(files))
	for _, f := range files {
		if _, err := os.Lstat(filepath.Join(snapshot, filepath.FromSlash(f))); err == nil {
			return fmt.Errorf("%s collides with the repository's %s", filepath.Join(dir, f), f)
		}
		b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(f)))
		if err != nil {
			return err
		}
		data[f] = b
	}
	return place(data, root)
}

// place writes files (slash paths) into the judge box's layer (or copy),
// written by the harness: every write goes through an os.Root, and a
// directory on a file's path that the change turned into a symlink or a
// file is refused, so nothing the agent left there can steer the
// harness's writes onto the host.
func place(files map[string][]byte, root string) error {
	r, err := os.OpenRoot(root)
	if err != nil {
		return err
	}
	defer r.Close()
	names := make([]string, 0, len(files))
	for f := range files {
		names = append(names, f)
	}
	slices.Sort(names)
	for _, f := range names {
		if err := realDirs(r, path.Dir(f)); err != nil {
			return fmt.Errorf("cannot place %s: %w", f, err)
		}
		if err := r.MkdirAll(path.Dir(f), 0o755); err != nil {
			return err
		}
		_ = r.Remove(f) // a file the agent created there loses to the harness's
		if err := r.WriteFile(f, files[f], 0o644); err != nil {
			return err
		}
	}
	return nil
}

// realDirs refuses a slash path of which some existing component is not
// a directory (the change replaced it with a symlink or a file).
func realDirs(r *os.Root, dir string) error {
	parts := strings.Split(dir, "/")
	for i := range parts {
		p := strings.Join(parts[:i+1], "/")
		if p == "." {
			continue
		}
		st, err := r.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		if !st.IsDir() {
			return fmt.Errorf("the change made %s a %s, where the harness places files in a directory", p, st.Mode().Type())
		}
	}
	return nil
}

// copyTree copies a directory with its special files and extended
// attributes; flags are more options for cp.
func copyTree(ctx context.Context, src, dst string, flags ...string) error {
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	args := append(append([]string{"-a"}, flags...), "--", src+"/.", dst)
	out, err := exec.CommandContext(ctx, "cp", args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("copy the change: %w: %s", err, strings.TrimSpace(string(out)))
	}
	return nil
}

// RemoveAll deletes a tree even where read-only directories (a Go module
// cache) would stop os.RemoveAll.
func RemoveAll(dir string) {
	if os.RemoveAll(dir) == nil {
		return
	}
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			_ = os.Chmod(p, 0o755)
		}
		return nil
	})
	_ = os.RemoveAll(dir)
}

// runHidden runs a test gate against held-out tests, which ctx's judge
// box holds. The inner node writes its logs into a scratch directory that
// is deleted; only the verdict's counts reach the attempt directory, the
// events and the agent.
func (q *quietNode) runHidden(ctx context.Context, in *runtime.Input, names bool) (*runtime.Result, error) {
	scratch, err := os.MkdirTemp("", "sg-hidden-out-")
	if err != nil {
		return nil, err
	}
	defer RemoveAll(scratch)
	inner := *in
	inner.Dir = scratch
	res, err := q.inner.Run(ctx, &inner)
	var cannot errUnjudgeable
	if errors.As(err, &cannot) {
		return nil, err // says nothing of the held-out tests
	}
	if err != nil {
		// The error may quote the tests' output.
		return nil, errors.New("the held-out test run broke (details withheld: they may quote the held-out tests)")
	}
	if res == nil {
		return nil, errors.New("the held-out test run returned no result")
	}
	return hiddenResult(in, res, names)
}

// hiddenResult strips a held-out test result down to what the agent and
// the records may see.
func hiddenResult(in *runtime.Input, res *runtime.Result, names bool) (*runtime.Result, error) {
	l, err := LedgerOf(in)
	if err != nil {
		return nil, err
	}
	// Names only when the node says so (HeldOut).
	failed, _ := res.Outputs["failed"].(int)
	failures, _ := res.Outputs["failures"].([]string)
	flaky, _ := res.Outputs["flaky"].([]string)
	out := &runtime.Result{Outcome: res.Outcome, Tokens: res.Tokens, Outputs: map[string]any{
		"passed": res.Outputs["passed"], "failed": res.Outputs["failed"], "skipped": res.Outputs["skipped"],
		"failures": []string{}, "flaky": []string{}}}
	if names {
		out.Outputs["failures"], out.Outputs["flaky"] = failures, flaky
	}
	why := ""
	switch {
	case res.Outcome == runtime.OutcomePass:
	case failed > 0:
		why = fmt.Sprintf("%d held-out tests failed", failed)
	default:
		why = "the held-out tests did not pass (no test ran, the report was unreadable, or they did not build)"
	}
	if why != "" {
		out.Reason = why
		out.Feedback = strings.ToUpper(why[:1]) + why[1:] + "."
		if names && len(failures) > 0 {
			out.Feedback += "\nFailing held-out tests: " + strings.Join(failures, ", ")
		}
	}
	g, ok := l.latest(in.NodeID)
	if !ok {
		return nil, errors.New("the held-out test run recorded no verdict")
	}
	g.Reason = why
	if err := l.recordAttempt(in, g); err != nil {
		return nil, err
	}
	out.Artifacts = []string{"verify.json"}
	return out, nil
}

// heldOutRemoved takes back into now what the harness's own removal of
// the held-out tests changed in the judge box's workspace (the test
// gate's canary plan deletes them once their binaries are built, so the
// code under test cannot read them): each held-out file gone, and the
// directory it was in when that directory is the same one, with the same
// mode, holding exactly what it held less the removed files. Anything
// else written there, or a held-out file that is still present but
// changed, stays a write. What this cannot tell from the removal is a
// file created and deleted again in such a directory while the gate ran.
func heldOutRemoved(start, now map[string]stamp, heldOut []string) {
	removed := map[string]bool{}
	dirs := map[string]bool{}
	for _, f := range heldOut {
		if _, was := start[f]; !was {
			continue
		}
		if _, is := now[f]; !is {
			removed[f] = true
			dirs[path.Dir(f)] = true
		}
	}
	if len(removed) == 0 {
		return
	}
	entries := func(m map[string]stamp, skip map[string]bool) map[string][]string {
		out := map[string][]string{}
		for p := range m {
			if d := path.Dir(p); dirs[d] && p != "." && !skip[p] {
				out[d] = append(out[d], p)
			}
		}
		for _, e := range out {
			slices.Sort(e)
		}
		return out
	}
	before, after := entries(start, removed), entries(now, nil)
	for d := range dirs {
		b, a := start[d], now[d]
		if b.ino == a.ino && b.mode == a.mode && slices.Equal(before[d], after[d]) {
			now[d] = b
		}
	}
	for f := range removed {
		now[f] = start[f]
	}
}
